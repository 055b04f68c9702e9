// Log records, one JSON object per line on stdout, as funcwsgi/logs.py writes them:
// timestamp, level, logger, message, function, namespace, then the record's own
// fields; inside a call also request_id and, with tracing on, trace_id and span_id.
// A stack is one exc_info field of the one record. SERVER_LOG_FORMAT=text gives
// plain lines for local development.
import { format } from 'node:util';
import { currentCall } from './calls.js';

export const LEVELS = { debug: 10, info: 20, warning: 30, error: 40, critical: 50 };
const NAMES = { 10: 'DEBUG', 20: 'INFO', 30: 'WARNING', 40: 'ERROR', 50: 'CRITICAL' };

const settings = { level: LEVELS.info, json: true, fields: { function: '', namespace: '' }, write: (line) => process.stdout.write(line) };

/** (trace id, span id) of the active span; set by the tracing module when tracing is on. */
export const spanIds = { current: null };

export function configureLogging(config, write) {
  settings.level = LEVELS[config.serverLogLevel];
  settings.json = config.serverLogFormat === 'json';
  settings.fields = { function: config.funcName, namespace: config.funcNamespace };
  if (write) settings.write = write;
}

let lastMillisecond = -1;
let lastStamp = '';
function timestamp(now) {
  if (now !== lastMillisecond) {
    lastMillisecond = now;
    lastStamp = new Date(now).toISOString(); // RFC 3339, UTC, milliseconds: what funcwsgi writes
  }
  return lastStamp;
}

function textStamp(now) {
  const iso = new Date(now).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)},${iso.slice(20, 23)}`;
}

function callFields(record, call) {
  if (call === undefined) return;
  if (record.request_id === undefined) record.request_id = call.requestId;
  if (record.trace_id === undefined && spanIds.current !== null) {
    const ids = spanIds.current(call);
    if (ids !== null) [record.trace_id, record.span_id] = ids;
  }
}

export function write(loggerName, level, message, fields, error, call = currentCall.getStore()) {
  if (level < settings.level) return;
  let line;
  if (settings.json) {
    const record = { timestamp: timestamp(Date.now()), level: NAMES[level], logger: loggerName, message, ...settings.fields, ...fields };
    callFields(record, call);
    if (error !== undefined) record.exc_info = error instanceof Error ? (error.stack ?? String(error)) : String(error);
    try {
      line = JSON.stringify(record);
    } catch {
      line = JSON.stringify({ ...record, ...Object.fromEntries(Object.entries(fields ?? {}).map(([k, v]) => [k, String(v)])) });
    }
  } else {
    line = `${textStamp(Date.now())} ${NAMES[level]} ${loggerName}: ${message}`;
    if (error !== undefined) line += `\n${error instanceof Error ? error.stack : String(error)}`;
  }
  settings.write(`${line}\n`);
}

const isFields = (value) => value !== null && typeof value === 'object' && !(value instanceof Error) && Object.getPrototypeOf(value) === Object.prototype;

/**
 * A named logger. `logger.info('got order %d', 7, { order: 7 })`: the message is
 * formatted like console.log, a trailing plain object adds its fields to the
 * record, an Error among the arguments becomes exc_info.
 */
export class Logger {
  constructor(name) { this.name = name; }

  log(level, args) {
    if (level < settings.level) return;
    let fields;
    let error;
    const parts = [];
    for (let i = 0; i < args.length; i += 1) {
      const arg = args[i];
      if (i === args.length - 1 && i > 0 && isFields(arg)) fields = arg;
      else if (arg instanceof Error && error === undefined && i > 0) error = arg;
      else parts.push(arg);
    }
    write(this.name, level, parts.length === 1 && typeof parts[0] === 'string' ? parts[0] : format(...parts), fields, error);
  }

  debug(...args) { this.log(LEVELS.debug, args); }
  info(...args) { this.log(LEVELS.info, args); }
  warning(...args) { this.log(LEVELS.warning, args); }
  warn(...args) { this.log(LEVELS.warning, args); }
  error(...args) { this.log(LEVELS.error, args); }
  critical(...args) { this.log(LEVELS.critical, args); }
  /** An error with its stack: logger.exception('failed', error). */
  exception(message, error) { write(this.name, LEVELS.error, String(message), undefined, error); }
  isEnabledFor(level) { return (LEVELS[level] ?? level) >= settings.level; }
}

const loggers = new Map();
export function getLogger(name) {
  let logger = loggers.get(name);
  if (logger === undefined) loggers.set(name, (logger = new Logger(name)));
  return logger;
}

/**
 * console.log and friends become records of the `function` logger, so a function's
 * own lines carry the call's ids like funcwsgi's `logging` records do.
 */
export function captureConsole() {
  const logger = getLogger('function');
  console.log = (...args) => logger.log(LEVELS.info, [format(...args)]);
  console.info = console.log;
  console.debug = (...args) => logger.log(LEVELS.debug, [format(...args)]);
  console.warn = (...args) => logger.log(LEVELS.warning, [format(...args)]);
  console.error = (...args) => {
    const error = args.find((a) => a instanceof Error);
    write('function', LEVELS.error, format(...args.filter((a) => a !== error)) || String(error?.message ?? ''), undefined, error);
  };
}

/** Logs a repeating problem once when it starts, then at most once per `seconds` (funcwsgi's OncePerBurst). */
export class OncePerBurst {
  constructor(logger, seconds = 10) { this.logger = logger; this.seconds = seconds; this.quietUntil = -Infinity; this.unreported = 0; }
  warning(message) {
    const now = performance.now() / 1000;
    if (now < this.quietUntil) { this.unreported += 1; return false; }
    const unreported = this.unreported;
    this.unreported = 0;
    this.quietUntil = now + this.seconds;
    this.logger.warning(unreported ? `${message} (${unreported} more since the last report)` : message);
    return true;
  }
}
