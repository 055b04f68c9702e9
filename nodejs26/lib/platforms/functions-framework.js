// Google's Functions Framework for Node.js (Cloud Run functions, Cloud Functions): the
// source folder's package.json `main` or index.js, whose function FUNCTION_TARGET names,
// registered with the framework's http(name, fn) or cloudEvent(name, fn) or exported
// (docs/migration-functions-framework.md#nodejs). Recognised by FUNCTION_SIGNATURE_TYPE,
// or by FUNCTION_TARGET (or a package.json depending on the framework) in a folder with
// no handler.js, .mjs or .cjs: there FUNCTION_TARGET names the framework's target, not
// funcwsgi's function in handler.js. HANDLER_* settings still win.
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_MODULES, moduleFile, setBy, withValues } from '../config.js';
import { LoadError, pyRepr } from '../errors.js';
import { getLogger } from '../logs.js';
import { givenByUser } from './index.js';
import { invokerFor, loadTarget, modulePath, PACKAGE } from './functions-framework/host.js';

const log = getLogger('funcwsgi.functions_framework');

/** The framework's default FUNCTION_TARGET. */
export const DEFAULT_TARGET = 'function';

/** HANDLER_FOLDER, or the working folder (the framework's FUNCTION_SOURCE default) when that is the default '/'. */
export function sourceFolder(config) {
  const folder = path.resolve(config.handlerFolder);
  return folder === '/' && !givenByUser(config, 'handlerFolder') && process.cwd() !== '/' ? process.cwd() : folder;
}

const hasHandlerModule = (folder) => moduleFile(folder, DEFAULT_MODULES[0]) !== null;

function dependsOnFramework(folder) {
  const pkg = readPackage(folder);
  return Boolean(pkg?.dependencies?.[PACKAGE] ?? pkg?.devDependencies?.[PACKAGE]);
}

/**
 * FUNCTION_TARGET as given (the config splits 'a.b' into module and function; the framework walks nested
 * exports); unset, the --target of package.json's start script (how the function runs locally with the
 * framework's CLI), else the framework's default.
 */
export function target(config) {
  const fn = config.handlerFunctionName;
  if (setBy(config, 'handlerFunctionName') === 'FUNCTION_TARGET') return setBy(config, 'handlerModuleName') === 'FUNCTION_TARGET' ? `${config.handlerModuleName}.${fn}` : fn;
  if (givenByUser(config, 'handlerFunctionName')) return fn;
  return startScriptTarget(sourceFolder(config)) ?? DEFAULT_TARGET;
}

/** --target=NAME (or --target NAME) of `functions-framework` in package.json's scripts.start, or null. */
export function startScriptTarget(folder) {
  const start = readPackage(folder)?.scripts?.start;
  const found = typeof start === 'string' ? /\bfunctions-framework(?:-nodejs)?\b[^&|;]*?--target[= ]([\w.-]+)/.exec(start) : null;
  return found ? found[1] : null;
}

function readPackage(folder) {
  try {
    return JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'));
  } catch {
    return null;
  }
}

export function signal(config) {
  const signature = setBy(config, 'handlerFrameworkSignature');
  if (signature) return `${signature}=${config.handlerFrameworkSignature}`;
  if (givenByUser(config, 'handlerModuleName') && setBy(config, 'handlerModuleName') !== 'FUNCTION_TARGET') return null;
  const folder = sourceFolder(config);
  if (hasHandlerModule(folder)) return null;
  if (setBy(config, 'handlerFunctionName') === 'FUNCTION_TARGET') return `FUNCTION_TARGET=${target(config)} without a handler.js`;
  return dependsOnFramework(folder) ? `${path.join(folder, 'package.json')} depends on ${PACKAGE}` : null;
}

/** The source folder, the framework's module (unless HANDLER_MODULE_NAME names one) and FUNCTION_TARGET. */
export async function locate(config) {
  const folder = sourceFolder(config);
  const changes = { handlerFolder: folder, handlerFunctionName: target(config) };
  if (!givenByUser(config, 'handlerModuleName') || setBy(config, 'handlerModuleName') === 'FUNCTION_TARGET') {
    changes.handlerModuleName = fs.existsSync(folder) ? path.relative(folder, modulePath(folder)) : 'index.js';
  }
  return withValues(config, changes, 'FUNCTION_TARGET');
}

export async function load(config) {
  const folder = config.handlerFolder;
  const file = path.resolve(folder, config.handlerModuleName);
  if (!fs.existsSync(file)) throw new LoadError(`no Functions Framework module ${pyRepr(config.handlerModuleName)} in ${folder}`);
  const found = await loadTarget(folder, config.handlerFunctionName, config.handlerFrameworkSignature, file);
  log.info(`Functions Framework ${found.signatureType} function ${pyRepr(config.handlerFunctionName)}: ${found.registeredBy ? `registered with ${found.registeredBy}` : `exported by ${found.path}`}`);
  return { fn: found.fn, signature: found.signatureType, name: config.handlerFunctionName, path: found.path, module: found.module, hooks: {}, folder, invoke: invokerFor(found) };
}

export const invoker = (loaded) => loaded.invoke;
