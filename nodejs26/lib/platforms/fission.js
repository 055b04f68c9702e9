// Fission's Node.js environment: a runtime that starts empty and is specialised
// to a function (fission/environments at commit 45815b42c733a396cc37a9ca14ec052b13cf3826,
// nodejs/server.js; funcwsgi/compat/fission.py is the Python side). The fetcher
// copies the function into the shared volume (/userfunc, USERFUNCVOL) and asks
// the runtime to load it: `POST /specialize` loads /userfunc/user's default
// export; `POST /v2/specialize` with {filepath, functionName} a file or a
// folder ('' the default export of the folder's main file, 'file' that file's
// default export, 'file.export' a named one). The function is `fn(context)` (or
// `fn(context, callback)`) with `context.request` an Express request whose body is
// parsed, and returns {status, body, headers}.
import fs from 'node:fs';
import path from 'node:path';
import { moduleFile, withValues } from '../config.js';
import { LoadError } from '../errors.js';
import { importModule } from '../loader.js';
import { getLogger } from '../logs.js';
import { givenByUser } from './index.js';
import { FissionFunction } from './fission/call.js';

const log = getLogger('funcwsgi.fission');
export const DEFAULT_VOLUME = '/userfunc';
/** The port the environment listens on (its server.js's default). */
export const FISSION_PORT = 8888;
const EXTENSIONS = ['.js', '.mjs', '.cjs'];
const NOT_GENERIC = Buffer.from('Not a generic container');
const GENERIC = Buffer.from('Generic container: no requests supported');
const TEXT_HTML = 'text/html; charset=utf-8';

export const volume = (config) => config.fissionUserfuncVolume ?? DEFAULT_VOLUME;

export function signal(config) {
  if (config.fissionUserfuncVolume) return `USERFUNCVOL=${config.fissionUserfuncVolume}`;
  if (fs.existsSync(DEFAULT_VOLUME) && fs.statSync(DEFAULT_VOLUME).isDirectory() && moduleFile(config.handlerFolder, config.handlerModuleName) === null) {
    return `${DEFAULT_VOLUME} exists and no ${config.handlerModuleName}.js does`;
  }
  return null;
}

/** The volume as the function's folder; the environment's port 8888 unless SERVER_PORT (or PORT) says otherwise. */
export async function locate(config) {
  const changes = {};
  if (!givenByUser(config, 'handlerFolder')) changes.handlerFolder = volume(config);
  if (!givenByUser(config, 'serverPort')) changes.serverPort = FISSION_PORT;
  return withValues(config, changes);
}

/** The path of a module given without its extension, as the environment looks for it. */
function withExtension(modulePath) {
  if (path.extname(modulePath)) return modulePath;
  for (const ext of EXTENSIONS) if (fs.existsSync(modulePath + ext)) return modulePath + ext;
  return modulePath; // an extensionless file, as the fetcher writes /userfunc/user
}

/** The file `functionName` names in `filepath` and the export (undefined: the default), as specializeV2 reads them. */
export function entryOf(filepath, functionName) {
  let file;
  let exportName;
  if (functionName && functionName.includes('.')) [file, exportName] = functionName.split('.');
  else if (functionName && functionName.trim() !== '') file = functionName;
  const stats = fs.statSync(filepath, { throwIfNoEntry: false });
  if (stats?.isFile()) return { modulePath: filepath, exportName };
  if (!file) file = mainFile(filepath, stats);
  return { modulePath: path.join(filepath, file), exportName };
}

/** The folder's main file without its extension: its only script, package.json's main, else index or main. */
function mainFile(folder, stats) {
  if (!stats?.isDirectory()) return 'index';
  const files = fs.readdirSync(folder).filter((name) => EXTENSIONS.some((ext) => name.endsWith(ext)));
  if (files.length === 0) return 'index';
  if (files.length === 1) return path.parse(files[0]).name;
  let main = null;
  try {
    const declared = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')).main;
    if (files.includes(declared)) main = declared;
  } catch {
    // no package.json, or none that reads: the usual names decide
  }
  main ??= ['index.js', 'index.mjs', 'index.cjs', 'main.js'].find((name) => files.includes(name)) ?? files[0];
  return path.parse(main).name;
}

/** The function a specialise call names: the export, or the module's default (a CommonJS module.exports). */
export async function loadUserFunction(modulePath, exportName) {
  const file = withExtension(modulePath);
  if (!fs.existsSync(file)) throw new LoadError(`no function file ${file}`);
  const module = await importModule(file);
  const fn = exportName ? module[exportName] ?? module.default?.[exportName] : module.default ?? module;
  if (typeof fn !== 'function') throw new LoadError(`${exportName ? `export '${exportName}'` : 'the default export'} of ${file} is ${fn === undefined ? 'missing' : `a ${typeof fn}`}, not a function`);
  return { fn, file };
}

/** Answers the specialise calls, then every call with the loaded function. */
class Specialiser {
  constructor(config) {
    this.config = config;
    this.volume = volume(config);
    this.function = null;
    this.invoke = (call) => this.serve(call);
  }

  async specialise(modulePath, exportName) {
    const { fn, file } = await loadUserFunction(modulePath, exportName);
    this.function = new FissionFunction(fn, `${exportName ?? 'default'}() in ${file}`);
    log.info(`Specialised to ${exportName ?? 'the default export'} of ${file}`);
  }

  serve(call) {
    if (this.function === null) {
      log.error('called before /specialize or /v2/specialize loaded a function');
      call.failure ??= 'exception';
      return void call.answer(500, ['Content-Type', TEXT_HTML, 'Content-Length', String(GENERIC.length)], GENERIC);
    }
    this.function.call(call);
  }

  async specialiseCall(call, v2) {
    // Once specialised, the container stays so: a second specialise call is refused.
    if (this.function !== null) return void call.answer(400, ['Content-Type', TEXT_HTML, 'Content-Length', String(NOT_GENERIC.length)], NOT_GENERIC);
    let modulePath;
    let exportName;
    if (v2) {
      let info;
      try {
        info = JSON.parse(call.data?.toString('utf8') || '{}');
      } catch {
        info = null;
      }
      if (info === null || typeof info !== 'object' || typeof info.filepath !== 'string') return void refuseSpecialise(call, 'expected a JSON object with filepath and functionName');
      ({ modulePath, exportName } = entryOf(info.filepath, typeof info.functionName === 'string' ? info.functionName : ''));
    } else {
      modulePath = path.join(this.volume, 'user');
    }
    try {
      await this.specialise(modulePath, exportName);
    } catch (error) {
      return void refuseSpecialise(call, error instanceof LoadError ? error.message : String(error), error);
    }
    call.answer(202, [], undefined);
  }
}

/** The environment answers a failed specialise with 500 and its error as JSON (`{}` for an Error): the reason goes to the log only. */
function refuseSpecialise(call, why, error) {
  log.log(40, [`specialising failed: ${why}`, ...(error?.userStack ? [Object.assign(new Error(why), { stack: error.userStack })] : [])]);
  call.failure ??= 'exception';
  const body = Buffer.from('{}');
  call.answer(500, ['Content-Type', TEXT_HTML, 'Content-Length', String(body.length)], body);
}

/**
 * Nothing to load yet, unless the handler settings name the function (HANDLER_FOLDER holding the module,
 * HANDLER_MODULE_NAME, HANDLER_FUNCTION_NAME, as `funcwsgi run` sets them): then it is specialised at
 * start-up, with the export HANDLER_FUNCTION_NAME names, else `main` when the module has one, else its default.
 */
export async function load(config) {
  const specialiser = new Specialiser(config);
  const folder = path.resolve(config.handlerFolder);
  const named = ['handlerFolder', 'handlerModuleName', 'handlerFunctionName'].some((field) => givenByUser(config, field));
  const file = moduleFile(folder, config.handlerModuleName);
  if (named && file !== null) {
    const module = await importModule(file);
    const exportName = givenByUser(config, 'handlerFunctionName') || typeof (module[config.handlerFunctionName] ?? module.default?.[config.handlerFunctionName]) === 'function' ? config.handlerFunctionName : undefined;
    await specialiser.specialise(file, exportName);
  }
  // The specialise calls are the contract's own routes, past the steps that time and count calls: loading a
  // function is no call of it, and one whose imports outlast SERVER_CALL_TIMEOUT loads all the same.
  const ownRoutes = new Map([
    ['/specialize', (call) => specialiser.specialiseCall(call, false)],
    ['/v2/specialize', (call) => specialiser.specialiseCall(call, true)],
  ]);
  return { fn: specialiser.invoke, signature: 'fission', name: 'fission', path: folder, module: {}, hooks: {}, folder, invoke: specialiser.invoke, ownRoutes };
}

export async function invoker(loaded) {
  return loaded.invoke;
}
