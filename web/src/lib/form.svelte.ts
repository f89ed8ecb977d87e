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
   * Forgets the error at one field: the person changed its value, so the
   * error no longer applies (the others stay until the next save). Field
   * does this itself; a control of a form's own calls it on input.
   */
  edited(field: string) {
    if (field in this.errors) delete this.errors[field];
  }
}
