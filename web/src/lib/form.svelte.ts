import { ApiError, messageOf } from './api';

/**
 * The state of one form: busy while a request runs, the API's field errors
 * (shown next to their inputs) and a message for the rest.
 */
export class FormState {
  busy = $state(false);
  errors = $state<Record<string, string>>({});
  message = $state('');
  done = $state('');

  async run(fn: () => Promise<unknown>, doneText = ''): Promise<boolean> {
    this.busy = true;
    this.errors = {};
    this.message = '';
    this.done = '';
    try {
      await fn();
      this.done = doneText;
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
