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
        this.message = e.message;
      } else {
        this.message = messageOf(e);
      }
      return false;
    } finally {
      this.busy = false;
    }
  }
}
