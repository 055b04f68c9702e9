// Errors that stop start-up. Each prints as one readable line and exits 2,
// as funcwsgi's do (funcwsgi/errors.py).

export const EXIT_STARTUP_ERROR = 2;

export class StartupError extends Error {
  /** @param {string} message the one line shown  @param {string} [userStack] the user's own stack */
  constructor(message, userStack) {
    super(message);
    this.name = new.target.name;
    this.userStack = userStack;
  }
}

export class ConfigError extends StartupError {}
export class LoadError extends StartupError {}

export function reportAndExit(error) {
  process.stderr.write(`funcwsgi: error: ${error.message}\n`);
  if (error.userStack) process.stderr.write(`${String(error.userStack).trimEnd()}\n`);
  process.exitCode = EXIT_STARTUP_ERROR;
  process.exit(EXIT_STARTUP_ERROR);
}

/** A value as Python's repr() shows a string, so messages read the same in both runtimes. */
export function pyRepr(value) {
  if (typeof value !== 'string') return String(value);
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of value) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch < ' ' || ch === '\x7f') out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return quote + out + quote;
}
