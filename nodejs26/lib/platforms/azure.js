// Azure Functions' Node.js v4 programming model: an app folder with host.json and a
// package.json whose `main` names the files that call app.http() and its kin
// (docs/migration-azure.md#nodejs). Recognised by FUNCTIONS_WORKER_RUNTIME=node (what
// the Functions host sets for its Node worker) or by host.json beside package.json;
// AzureWebJobsScriptRoot (an alias of HANDLER_FOLDER) names the app's folder, as it does
// on Azure. The app is loaded and served by ./azure/host.js.
import fs from 'node:fs';
import path from 'node:path';
import { withValues } from '../config.js';
import { givenByUser } from './index.js';
import { loadApp } from './azure/host.js';

/** HANDLER_FOLDER (or AzureWebJobsScriptRoot), or the working folder when that is the default '/'. */
export function appRoot(config) {
  const folder = path.resolve(config.handlerFolder);
  return folder === '/' && !givenByUser(config, 'handlerFolder') && process.cwd() !== '/' ? process.cwd() : folder;
}

const isApp = (root) => fs.existsSync(path.join(root, 'host.json')) && fs.existsSync(path.join(root, 'package.json'));

export function signal(config) {
  if ((config.functionsWorkerRuntime ?? '').toLowerCase() === 'node') return 'FUNCTIONS_WORKER_RUNTIME=node';
  const root = appRoot(config);
  return isApp(root) ? `${path.join(root, 'host.json')} beside package.json` : null;
}

/** The app's folder, and what the start-up line shows: package.json's `main` (the files loaded) and `app`. */
export async function locate(config) {
  const root = appRoot(config);
  let main = null;
  try {
    main = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).main ?? null;
  } catch {
    // loading says what is wrong with package.json
  }
  const changes = { handlerFolder: root };
  if (!givenByUser(config, 'handlerModuleName') && typeof main === 'string' && main) changes.handlerModuleName = main;
  if (!givenByUser(config, 'handlerFunctionName')) changes.handlerFunctionName = 'app';
  return withValues(config, changes, 'package.json');
}

/** The app's HTTP functions, routed as the host routes them; appStart/appTerminate hooks as start() and stop(). */
export async function load(config) {
  const app = await loadApp(config.handlerFolder);
  return {
    fn: app.invoke, signature: 'azure', name: app.name, path: app.path, module: null, folder: config.handlerFolder,
    hooks: { start: app.start, stop: app.stop }, invoke: app.invoke, routes: app.routes,
  };
}

export const invoker = (loaded) => loaded.invoke;
