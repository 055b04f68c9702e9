// Makes `import ... from 'sdk'` and `require('sdk')` find this runtime's sdk
// without the function installing anything (the npm name `sdk` belongs to an
// unrelated package). `cloudevents` and `@opentelemetry/api`, which a function
// uses with the sdk, resolve to the runtime's own copies when the function has
// none (as in Kyma's image, where the function sits below the runtime's
// node_modules). The runtime imports this first; a function's own unit tests use
// it the same way: `node --import <repo>/nodejs26/sdk/register.js --test`.
// A platform's modules (lib/platforms/registry.js): those its host injects
// (`injects`) always resolve to the runtime's; those its functions install
// (`provides`, such as a platform's own library) to the runtime's only when the
// function has none of its own.
import { registerHooks } from 'node:module';
import { PLATFORMS } from '../lib/platforms/registry.js';

const SDK = new URL('./index.js', import.meta.url).href;
const RUNTIME = new URL('../package.json', import.meta.url).href;
const SHARED = new Set(['cloudevents', '@opentelemetry/api']);
const PLATFORM_FILES = new URL('../lib/platforms/', import.meta.url);
const INJECTED = new Map();
const PROVIDED = new Map();
for (const platform of Object.values(PLATFORMS)) {
  for (const [specifier, file] of Object.entries(platform.injects)) INJECTED.set(specifier, new URL(file, PLATFORM_FILES).href);
  for (const [specifier, file] of Object.entries(platform.provides)) PROVIDED.set(specifier, new URL(file, PLATFORM_FILES).href);
}
const notFound = (error) => error?.code === 'ERR_MODULE_NOT_FOUND' || error?.code === 'MODULE_NOT_FOUND';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'sdk') return { url: SDK, format: 'module', shortCircuit: true };
    const injected = INJECTED.get(specifier);
    if (injected !== undefined) return { url: injected, format: 'module', shortCircuit: true };
    const provided = PROVIDED.get(specifier);
    if (provided === undefined && !SHARED.has(specifier)) return nextResolve(specifier, context);
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (!notFound(error)) throw error;
      if (provided !== undefined) return { url: provided, format: 'module', shortCircuit: true };
      return nextResolve(specifier, { ...context, parentURL: RUNTIME });
    }
  },
});
