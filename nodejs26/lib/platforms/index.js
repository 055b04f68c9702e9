// Which platform a function was written for, decided once at start-up from the
// platform's own signals (funcwsgi/compat/__init__.py's recognise/resolve/load_function):
// the platforms of registry.js are asked in their precedence; HANDLER_PLATFORM
// overrides. A function with no platform's signal costs nothing: no platform
// module is imported.
//
// A platform module (lib/platforms/<module>.js) exports:
//   signal(config)          -> why the function is this platform's (one short phrase), or null
//   locate(config)          -> (async) config with the handler's folder, module and function filled in
//                              where no HANDLER_ or FUNC_ setting gave them (config.setBy says which did)
//   load(config)            -> (optional, async) the loaded function, for a platform with its own loader
//   invoker(loaded, config) -> (call) => void: the contract's call, answering through `call`
import { fromEnv, setBy, withValues } from '../config.js';
import { getLogger } from '../logs.js';
import { loadFunction } from '../loader.js';
import { PLATFORMS, RECOGNITION_ORDER } from './registry.js';

const log = getLogger('funcwsgi.platforms');
const contracts = new Map();

/** The platform's module, imported on first use. */
export async function contract(name) {
  const platform = PLATFORMS[name];
  if (platform.module === null) throw new Error(`${platform.title} has no module of its own`);
  if (!contracts.has(name)) contracts.set(name, await import(`./${platform.module}.js`));
  return contracts.get(name);
}

/** {platform, why, others}: the platform chosen for `config`, the signal that chose it, other platforms whose signals are present too. */
export async function recognise(config) {
  if (config.handlerPlatform) return { platform: config.handlerPlatform, why: 'HANDLER_PLATFORM', others: [] };
  const found = [];
  for (const name of RECOGNITION_ORDER) {
    const why = (await contract(name)).signal(config);
    if (why) found.push([name, why]);
  }
  if (found.length === 0) return { platform: 'funcwsgi', why: '', others: [] };
  return { platform: found[0][0], why: found[0][1], others: found.slice(1).map(([name]) => name) };
}

/**
 * {config, platform, why}: `config` with its platform chosen and the handler located as that platform lays
 * it out. The function's own settings win: a platform's locate() fills in only what no HANDLER_* or FUNC_*
 * variable set. One warning when another platform's signals are present too.
 */
export async function resolve(config) {
  const { platform, why, others } = await recognise(config);
  const record = PLATFORMS[platform];
  if (record.module === null) return { config, platform, why };
  const located = await (await contract(platform)).locate(withValues(config, { handlerPlatform: platform }));
  if (others.length) {
    log.warning(`Signals of several platforms (${[platform, ...others].join(', ')}): calling the function with the ${platform} contract (${why}); set HANDLER_PLATFORM to one of ${others.join(', ')} to choose another`);
  }
  return { config: located, platform, why };
}

/**
 * The loaded function (loader.loadFunction's shape), called with its platform's contract: `invoke`,
 * when set, is the per-call function the runtime uses instead of its own signatures' invokers.
 */
export async function loadForPlatform(config, platform) {
  const record = PLATFORMS[platform];
  if (record.module === null) return loadFunction(config);
  const module = await contract(platform);
  const loaded = module.load ? await module.load(config) : await loadFunction(config);
  return { ...loaded, invoke: loaded.invoke ?? (await module.invoker(loaded, config)) };
}

/** Whether a HANDLER_ or FUNC_ setting (or its alias) gave `field`, so that a platform leaves it alone. */
export const givenByUser = (config, field) => setBy(config, field) !== undefined;

/** For the parity test and the docs: the registry as plain data, and which platform each variable alone marks. */
export async function registryList() {
  const list = [];
  for (const [name, record] of Object.entries(PLATFORMS)) {
    const recognisedFrom = {};
    for (const [variable, value] of Object.entries(record.variables)) {
      recognisedFrom[variable] = (await recognise(fromEnv({ [variable]: value ?? 'x', HANDLER_FOLDER: '/nonexistent' }))).platform;
    }
    list.push({ name, title: record.title, page: record.page, variables: Object.keys(record.variables), module: record.module, template: record.template, precedence: record.precedence, recognisedFrom });
  }
  return list;
}
