// AWS Lambda's Node.js contract behind API Gateway and function URLs:
// `handler(event, context[, callback])`, as the Lambda Node.js runtime calls it
// (aws/aws-lambda-nodejs-runtime-interface-client at commit
// 90b5b5bce1fd429f02d37e97acef436c1a331c81: src/utils/handler-path.ts,
// src/function/module-loader.ts, handler-resolver.ts, callback-deprecation.ts;
// the callback and context.succeed/fail/done of src/CallbackContext.js and
// src/Runtime.js at 1597e2a9 and 1ab99907). The call becomes the event the HTTP
// front sends (aws-lambda/front.js), its result the front's answer
// (docs/migration-aws-lambda-nodejs.md).
import fs from 'node:fs';
import path from 'node:path';
import { moduleFile as runtimeModuleFile, withValues } from '../config.js';
import { LoadError, pyRepr } from '../errors.js';
import { importModule } from '../loader.js';
import { getLogger } from '../logs.js';
import { givenByUser } from './index.js';
import { makeInvoker } from './aws-lambda/front.js';
import { findTemplate, readTemplate } from './aws-lambda/template.js';
import { runtimeVersion } from './aws-lambda/versions.js';

const log = getLogger('funcwsgi.aws_lambda');
/** The Lambda console's own default, when no _HANDLER or template names one. */
const CONSOLE_HANDLER = 'index.handler';
/** The extensions the runtime tries, in its order (module-loader.ts). */
const EXTENSIONS = ['', '.js', '.mjs', '.cjs'];
/** Runtimes that still take callback handlers (callback-deprecation.ts: removed from nodejs24.x on). */
const LAST_CALLBACK_RUNTIME = 22;
export const DEFAULT_CALL_TIMEOUT = 180;

export function signal(config) {
  if (config.lambdaHandler) return `_HANDLER=${config.lambdaHandler}`;
  if (config.awsLambdaFunctionName) return `AWS_LAMBDA_FUNCTION_NAME=${config.awsLambdaFunctionName}`;
  if (config.awsExecutionEnv) return `AWS_EXECUTION_ENV=${config.awsExecutionEnv}`;
  const template = findTemplate(taskRoot(config));
  if (template !== null && fs.readFileSync(template, 'utf8').includes('AWS::Serverless::Function')) return `${template} declares an AWS::Serverless::Function`;
  return null;
}

/** LAMBDA_TASK_ROOT, else HANDLER_FOLDER, or the working folder when that is the default '/'. */
export function taskRoot(config) {
  if (config.lambdaTaskRoot) return path.resolve(config.lambdaTaskRoot);
  const folder = path.resolve(config.handlerFolder);
  return folder === '/' && !givenByUser(config, 'handlerFolder') && process.cwd() !== '/' ? process.cwd() : folder;
}

/** {moduleRoot, moduleName, handlerName} of a handler string, as the runtime splits it (handler-path.ts). */
export function parseHandler(handler, origin = '_HANDLER') {
  if (handler.includes('..')) throw new LoadError(`${origin}=${pyRepr(handler)} is invalid: '..' is refused, as Lambda refuses it; name the file below LAMBDA_TASK_ROOT`);
  const base = path.basename(handler);
  const moduleRoot = handler.slice(0, handler.length - base.length).replace(/\/$/, '');
  const match = /^([^.]*)\.(.*)$/.exec(base);
  if (!match || !match[1] || !match[2]) throw new LoadError(`${origin}=${pyRepr(handler)} is invalid: expected file.export or dir/file.export such as 'index.handler'`);
  return { moduleRoot, moduleName: match[1], handlerName: match[2] };
}

/** The folder, file and export the handler string names; the template's Timeout as the call timeout. HANDLER_* settings win. */
export async function locate(config) {
  const root = taskRoot(config);
  const template = await readTemplate(root, config.lambdaHandler);
  const handler = config.lambdaHandler ?? template.handler ?? (fs.existsSync(path.join(root, 'index.mjs')) || fs.existsSync(path.join(root, 'index.js')) ? CONSOLE_HANDLER : null);
  const changes = { lambdaTaskRoot: root };
  if (template.timeout !== null && !givenByUser(config, 'serverCallTimeout')) changes.serverCallTimeout = template.timeout;
  if (handler === null) {
    if (!(givenByUser(config, 'handlerFolder') && config.lambdaTaskRoot)) changes.handlerFolder = root;
    const located = withValues(config, changes);
    if (runtimeModuleFile(located.handlerFolder, located.handlerModuleName) === null) {
      throw new LoadError(`the function is AWS Lambda's (${signal(config)}), but nothing names its handler: set _HANDLER (such as index.handler), or put a template.yaml or index.mjs in ${root}`);
    }
    return located;
  }
  const { moduleRoot, moduleName, handlerName } = parseHandler(handler, config.lambdaHandler ? '_HANDLER' : 'the template\'s Handler');
  const base = template.codeUri && !config.lambdaHandler ? path.join(root, template.codeUri) : root;
  // HANDLER_FOLDER names the handler's own folder only beside LAMBDA_TASK_ROOT; alone, it is the task root.
  if (!(givenByUser(config, 'handlerFolder') && config.lambdaTaskRoot)) changes.handlerFolder = path.resolve(base, moduleRoot);
  if (!givenByUser(config, 'handlerModuleName')) changes.handlerModuleName = moduleName;
  // The export may be nested (`handlers.http.get`), as the runtime allows.
  if (!givenByUser(config, 'handlerFunctionName')) changes.handlerFunctionName = handlerName;
  return withValues(config, changes, config.lambdaHandler ? '_HANDLER' : template.path);
}

/** The handler, loaded as the Lambda runtime loads it: the first of '', .js, .mjs, .cjs that exists; the export looked up in the module, then its default. */
export async function load(config) {
  const folder = path.resolve(config.handlerFolder);
  const name = config.handlerFunctionName;
  const file = moduleFile(folder, config.handlerModuleName);
  const module = await importModule(file);
  const fn = findIn(module, name) ?? findIn(module.default, name);
  if (fn === undefined) {
    const found = Object.keys({ ...module.default, ...module }).filter((key) => key !== 'default' && key !== 'module.exports' && typeof (module[key] ?? module.default?.[key]) === 'function').sort();
    throw new LoadError(`no function ${pyRepr(name)} in ${file}; found: ${found.length ? found.join(', ') : 'no functions'}`);
  }
  if (typeof fn !== 'function') throw new LoadError(`${pyRepr(name)} in ${file} is a ${fn === null ? 'null' : typeof fn}, not a function`);
  checkCallback(fn, name, file, config.awsExecutionEnv);
  return { fn, signature: 'event-context', name, path: file, module, hooks: {}, folder };
}

function moduleFile(folder, moduleName) {
  for (const ext of EXTENSIONS) {
    const candidate = path.join(folder, moduleName + ext);
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  let entries = [];
  try {
    entries = fs.readdirSync(folder).sort();
  } catch {
    throw new LoadError(`the handler's folder ${folder} does not exist (LAMBDA_TASK_ROOT and _HANDLER name it)`);
  }
  throw new LoadError(`no ${moduleName}.js, ${moduleName}.mjs or ${moduleName}.cjs in ${folder}; the folder holds: ${entries.slice(0, 20).join(', ') || 'nothing'}`);
}

function findIn(module, name) {
  let found = module;
  for (const key of name.split('.')) found = found !== null && (typeof found === 'object' || typeof found === 'function') ? found[key] : undefined;
  return found;
}

/** From nodejs24.x on, a handler declaring a callback is refused at start-up, as the runtime refuses it. */
function checkCallback(fn, name, file, executionEnv) {
  const version = runtimeVersion(executionEnv);
  if (fn.length < 3 || version === null || version <= LAST_CALLBACK_RUNTIME) return;
  throw new LoadError(`${name}() in ${file} takes a callback (event, context, callback), which AWS Lambda no longer calls from nodejs24.x on (AWS_EXECUTION_ENV=${executionEnv}): make it an async function that returns its result`);
}

export async function invoker(loaded, config) {
  const template = await readTemplate(config.lambdaTaskRoot ?? loaded.folder, config.lambdaHandler);
  log.debug(`AWS Lambda front: payload format ${config.lambdaPayloadFormat ?? template.payloadFormat ?? '2.0'}, ${template.routes.length} route(s)`);
  return makeInvoker(loaded, config, template);
}
