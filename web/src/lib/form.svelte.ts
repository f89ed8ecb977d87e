import { ApiError, messageOf } from './api';

// The form whose success message shows. A success message belongs to the
// step that produced it: when the person starts the next step, in any form of
// the page, it goes (a "Topic added." must not stay on once the meeting has
// started), and a new success replaces it, however it is set. Errors stay
// until the person acts on them. One success message shows at a time.
let saying: FormState | null = null;

/**
 * The state of one form: busy while a request runs, the API's field errors
 * (shown next to their inputs) and a message for the rest.
 */
export class FormState {
  busy = $state(false);
  errors = $state<Record<string, string>>({});
  message = $state('');
  #done = $state('');

  /** The success message: setting one takes the place of any other form's. */
  get done(): string {
    return this.#done;
  }
  set done(text: string) {
    if (text && saying && saying !== this) saying.#done = '';
    if (text) saying = this;
    else if (saying === this) saying = null;
    this.#done = text;
  }

  /** doneText: said on success; a function is read once fn succeeded (words that name what was made). */
  async run(fn: () => Promise<unknown>, doneText: string | (() => string) = ''): Promise<boolean> {
    this.busy = true;
    this.errors = {};
    this.message = '';
    this.done = '';
    // A run that will say it worked is the person's next step (a run with
    // nothing to say is a read, such as a reload after a save).
    if (doneText && saying) saying.done = '';
    try {
      await fn();
      this.done = typeof doneText === 'function' ? doneText() : doneText;
      return true;
    } catch (e) {
      if (e instanceof ApiError && Object.keys(e.fields).length > 0) {
        this.errors = e.fields;
        // a refusal that names its field is said there, not twice
        this.message = Object.values(e.fields).includes(e.message) ? '' : e.message;
      } else {
        this.message = messageOf(e);
      }
      return false;
    } finally {
      this.busy = false;
    }
  }

  /**
   * The person changed a value of the form: the error at that field no
   * longer applies (the others stay until the next save), nor does the
   * message above the form, which answered the values saved. Field forgets
   * its own error itself and FormMessages hears any edit inside its <form>;
   * a control of a form's own calls this on input with its field.
   */
  edited(field?: string) {
    if (field !== undefined && field in this.errors) delete this.errors[field];
    this.message = '';
  }
}
