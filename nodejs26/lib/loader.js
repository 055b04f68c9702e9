// Find, import and check the user's function at start-up (funcwsgi/handler/loader.py's
// counterpart). Every failure is a LoadError whose message is one line naming
// the file, the function and what was found instead; when the user's module
// threw, its own stack rides along.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MODULE_EXTENSIONS, moduleFile, stripExtension } from './config.js';
import { LoadError, pyRepr } from './errors.js';
import { detectSignature, parameterNames } from './signatures.js';

const LISTED_ENTRIES = 20;
export const HOOK_NAMES = ['start', 'stop', 'ready', 'alive'];

/** @returns {Promise<{fn: Function, signature: string, name: string, path: string, module: object, hooks: object, folder: string}>} */
export async function loadFunction(config) {
  const folder = path.resolve(config.handlerFolder);
  const file = checkFolder(config.handlerFolder, folder, config.handlerModuleName);
  const module = await importModule(file);
  const name = config.handlerFunctionName;
  const exports = exported(module);
  const fn = exports[name];
  if (fn === undefined) {
    const found = Object.keys(exports).filter((key) => typeof exports[key] === 'function').sort();
    throw new LoadError(`no function ${pyRepr(name)} in ${file}; found: ${found.length ? found.join(', ') : 'no functions'}`);
  }
  if (typeof fn !== 'function') throw new LoadError(`${pyRepr(name)} in ${file} is a ${fn === null ? 'null' : typeof fn}, not a function`);
  const hooks = {};
  for (const hook of HOOK_NAMES) if (hook !== name && exports[hook] !== undefined) hooks[hook] = checkedHook(exports[hook], hook, file);
  return { fn, signature: detectSignature(fn, config.handlerSignature, `${pyRepr(name)} in ${file}`), name, path: file, module, hooks, folder };
}

/** A start/stop/ready/alive hook, checked as the runtime will call it: with no arguments (as funcwsgi checks). */
function checkedHook(value, hook, file) {
  if (typeof value !== 'function') {
    throw new LoadError(`${pyRepr(hook)} in ${file} is a ${value === null ? 'null' : typeof value}, not a function; the runtime calls ${hook}() with no arguments`);
  }
  if (value.length > 0) {
    const required = parameterNames(value).filter((p) => !p.startsWith('...')).slice(0, value.length);
    throw new LoadError(`${hook}() in ${file} requires ${value.length} argument(s) (${required.join(', ')}); the runtime calls ${hook}() with none`);
  }
  return value;
}

/** What the module offers: an ES module's named exports, or a CommonJS module's module.exports. */
export function exported(module) {
  const own = { ...module };
  delete own['module.exports'];
  const fallback = module.default;
  if (fallback !== null && (typeof fallback === 'object' || typeof fallback === 'function')) {
    for (const [key, value] of Object.entries(fallback)) if (!(key in own)) own[key] = value;
  }
  if (typeof fallback !== 'function' || 'main' in own) delete own.default;
  return own;
}

function checkFolder(configured, folder, moduleName) {
  if (!fs.existsSync(folder)) throw new LoadError(`HANDLER_FOLDER ${pyRepr(configured)} does not exist`);
  if (!fs.statSync(folder).isDirectory()) throw new LoadError(`HANDLER_FOLDER ${pyRepr(configured)} is a file, expected the folder that holds the function`);
  const file = moduleFile(folder, moduleName);
  if (file !== null && fs.existsSync(file)) return file;
  const base = stripExtension(moduleName);
  const wanted = file !== null ? path.basename(file) : `${MODULE_EXTENSIONS.slice(0, -1).map((ext) => base + ext).join(', ')} or ${base}${MODULE_EXTENSIONS.at(-1)}`;
  let entries;
  try {
    entries = fs.readdirSync(folder).sort();
  } catch (error) {
    throw new LoadError(`HANDLER_FOLDER ${pyRepr(configured)} cannot be read: ${error.code}`);
  }
  if (entries.length === 0) throw new LoadError(`no ${wanted} in ${folder}: the folder is empty`);
  const more = entries.length > LISTED_ENTRIES ? ` and ${entries.length - LISTED_ENTRIES} more` : '';
  throw new LoadError(`no ${wanted} in ${folder}; the folder holds: ${entries.slice(0, LISTED_ENTRIES).join(', ')}${more}`);
}

export async function importModule(file) {
  try {
    return await import(pathToFileURL(file).href);
  } catch (error) {
    throw describeImportError(error, file);
  }
}

function describeImportError(error, file) {
  if (error instanceof SyntaxError) {
    const where = syntaxLocation(error, file);
    if (where !== null) return new LoadError(`syntax error in ${where.file} line ${where.line}: ${error.message.split('\n')[0]}`, where.excerpt);
    return new LoadError(`importing ${file} raised SyntaxError: ${error.message.split('\n')[0]}`, error.stack);
  }
  if (error?.code === 'ERR_MODULE_NOT_FOUND' || error?.code === 'MODULE_NOT_FOUND') {
    const missing = /Cannot find (?:package|module) '([^']+)'/.exec(error.message)?.[1] ?? 'a module';
    return new LoadError(`${file} failed to import ${pyRepr(missing)}: ${error.message.split('\n')[0]}; is it in the function's package.json dependencies?`, userStack(error));
  }
  const kind = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  return new LoadError(`importing ${file} raised ${kind}: ${message.split('\n')[0]}`, userStack(error));
}

/** file and line of a syntax error: from the stack (CommonJS), else from `node --check` (ES modules hide it). */
function syntaxLocation(error, file) {
  const head = /^(\/[^\n]*?|file:\/\/[^\n]*?):(\d+)\n/.exec(error.stack ?? '');
  if (head) return { file: head[1].replace(/^file:\/\//, ''), line: Number(head[2]), excerpt: error.stack.split('\n\n')[0] };
  const checked = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 10_000 });
  const found = /^(\/[^\n]*?):(\d+)\n/.exec(checked.stderr ?? '');
  if (found) return { file: found[1], line: Number(found[2]), excerpt: checked.stderr.split('\n\n')[0] };
  return null;
}

/** The stack from the user's own frames, without the loader's. */
function userStack(error) {
  if (!(error instanceof Error) || !error.stack) return undefined;
  return error.stack.split('\n').filter((line) => !line.includes('node:internal') && !line.includes('/nodejs26/lib/')).join('\n');
}
