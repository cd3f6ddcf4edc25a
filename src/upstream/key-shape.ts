/**
 * Whether an API key looks like one, read without sending it anywhere: the configuration already
 * refuses an empty key and one with characters a header cannot carry; this finds the mistakes
 * that pass that (quotes kept from a shell or a .env line, a placeholder from an example, a URL or
 * `NAME=value` pasted in its place, the simulator's key sent to the real upstream). Pure; the
 * messages never quote the key.
 */

export interface KeyProblem {
  detail: string;
  fix: string;
}

/** Values of examples and templates, lower-cased, that are never a real key. */
const PLACEHOLDERS = new Set([
  'changeme',
  'change-me',
  'change_me',
  'replace-me',
  'replaceme',
  'your-key',
  'your_key',
  'yourkey',
  'your-api-key',
  'your_api_key',
  'api-key',
  'api_key',
  'apikey',
  'secret',
  'todo',
  'tbd',
  'placeholder',
  'example',
  'test',
]);

/** Keys this short are not keys an API hands out. */
export const MIN_KEY_LENGTH = 8;

/**
 * The first problem with the shape of `key`, or null. `remote` says whether the base URL is
 * another machine (so the simulator's `sandboxKey` cannot be meant).
 */
export function keyShapeProblem(
  key: string,
  options: { remote: boolean; sandboxKey?: string | undefined },
): KeyProblem | null {
  const fixValue = 'set DAYBOOK_API_KEY to the key exactly as the upstream gave it';
  if (/^["'`]|["'`]$/.test(key))
    return {
      detail: 'the key starts or ends with a quote mark, which would be sent as part of it',
      fix: 'remove the quote marks around DAYBOOK_API_KEY (in a .env file, quotes around the whole value are fine)',
    };
  if (/^[A-Z][A-Z0-9_]*=/.test(key))
    return {
      detail: 'the value holds a variable name and an equals sign (NAME=…): a line was pasted whole',
      fix: 'keep only the part after the equals sign',
    };
  if (/^bearer\b/i.test(key))
    return {
      detail: 'the key starts with the word Bearer, which daybook adds itself',
      fix: 'drop the word Bearer',
    };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(key))
    return {
      detail: 'the value is a URL, not a key',
      fix: `${fixValue} (the URL goes in DAYBOOK_API_BASE_URL)`,
    };
  const bare = key.toLowerCase().replace(/^sk[-_]/, '');
  if (
    /[<>{}]|\.\.\.|^x{3,}$/i.test(key) ||
    PLACEHOLDERS.has(key.toLowerCase()) ||
    PLACEHOLDERS.has(bare) ||
    /^(x+|\*+|0+|1234\d*)$/i.test(bare)
  )
    return { detail: 'the key is a placeholder from an example', fix: fixValue };
  if (key.length < MIN_KEY_LENGTH)
    return { detail: `the key is ${key.length} characters long: too short to be an API key`, fix: fixValue };
  if (options.remote && options.sandboxKey !== undefined && key === options.sandboxKey)
    return {
      detail: "the key is the simulator's sandbox key, and the base URL is not the simulator on this machine",
      fix: `${fixValue}, or point DAYBOOK_API_BASE_URL at the simulator (daybook sim)`,
    };
  return null;
}
