// The one catalogue of what the app says when the API refuses something
// (issue 29). The API's `errors` (field -> phrase) and `message` stay as
// they are for every client; the app words them for a site supervisor or an
// office admin: what to do, not which format a field has. api.ts applies it
// to every refusal, so every form (Field.svelte and the forms with their own
// controls) shows these words.

/** Phrases said the same whatever the field. */
const exact: Record<string, string> = {
  'is required': 'Fill this in',
  'must be true or false': 'Choose yes or no',
  'must be a non-empty string': 'Answer this question',
  'is required: every question needs an answer': 'Answer this question',
  "must name one of the question's values (enum_id)": 'Choose one of the answers',
  'must be a snowflake id': 'Choose one from the list',
  'must be snowflake ids, comma-separated': 'Choose from the list',
  'must be an RFC 3339 date and time': 'Choose a date and time',
  'must be an ISO 8601 timestamp such as 2026-11-21T09:30:00.000Z': 'Choose a date and time',
  'must be a unix timestamp': 'Choose a date and time',
  'must be in the future': 'Choose a date and time that is still to come',
  'must be an IANA time zone such as Europe/London': 'Choose a time zone',
  'must be a valid e-mail address': 'Enter an e-mail address such as name@example.com',
  'must be a colour as #RRGGBB': 'Choose a colour',
  'must be a number': 'Enter a number',
  'must be a non-negative integer': 'Enter a whole number, 0 or more',
  'must not be negative': 'Enter 0 or more',
  'must be a string': 'Enter text here',
  'must be one line': 'Keep this to one line',
  'must be a JPEG or PNG image': 'Choose a JPEG or PNG picture',
  'must be well-formed SVG': 'Draw the signature again',
  'must be a phone number of 5-15 digits, optionally starting with +': 'Enter a phone number of 5 to 15 digits (it may start with +)',
  'must be from -90 to 90': 'Enter a latitude from -90 to 90',
  'must be from -180 to 180': 'Enter a longitude from -180 to 180',
  'is read-only': 'This cannot be changed',
  'must be a decimal number for a number column': 'Enter a number',
  'must be true or false for a boolean column': 'Enter true or false',
};

/** Phrases with a part that varies, in order: the first that matches words it. */
const patterns: [RegExp, (m: RegExpMatchArray) => string][] = [
  [/^must be at most (\d+) characters$/, (m) => `Use at most ${m[1]} characters`],
  [/^must be (\d+)-(\d+) characters$/, (m) => `Use ${m[1]} to ${m[2]} characters`],
  [/^must be (?:an integer )?from (-?\d+) to (-?\d+)$/, (m) => `Enter a number from ${m[1]} to ${m[2]}`],
  [/^must be of type (boolean)/, () => 'Choose yes or no'],
  [/^must be of type (number|integer)/, () => 'Enter a number'],
  [/^must be of type /, () => 'Fill this in again'],
  [/RFC 3339|ISO 8601|timestamp/, () => 'Choose a date and time'],
  [/^must be a date\b/, () => 'Choose a date'],
  [/time zone/, () => 'Choose a time zone'],
  [/snowflake/, () => 'Choose one from the list'],
];

/** The words for one field's refusal. */
export function fieldWords(phrase: string): string {
  const p = phrase.trim();
  if (p in exact) return exact[p];
  for (const [re, words] of patterns) {
    const m = p.match(re);
    if (m) return words(m);
  }
  return p;
}

/** Messages of a whole refusal, said as a person would. */
const general: [RegExp, string][] = [
  [/^The request has invalid fields\.?$/, 'Some answers need attention: see the marked fields.'],
  [/^No such path\.?$/, 'There is nothing at this address.'],
  [/^No such file\.?$/, 'That file is not there any more.'],
  [/^The request body is too large\.?$/, 'That is too large to send.'],
  [/^The request body (is not valid JSON|could not be read|must be a JSON object|is invalid)/, 'The page sent something the server could not read. Reload the page and try again.'],
  [/^The path parameter .* must be a snowflake id\.$/, 'There is nothing at this address.'],
  [/^The resource was not found\.$/, 'That is not there any more.'],
  [/^The server answered 5\d\d\.$/, 'Something went wrong on the server. Try again in a moment.'],
  [/^The server answered 404\.$/, 'That is not there any more.'],
  [/^The server answered 403\.$/, 'You may not do that here.'],
];

/** The words for a refusal's message. */
export function messageWords(message: string): string {
  for (const [re, words] of general) if (re.test(message)) return words;
  return message;
}

/** Words every field of an `errors` map. */
export function wordFields(fields: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = typeof v === 'string' ? fieldWords(v) : v;
  return out;
}
