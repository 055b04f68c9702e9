// What an Azure Functions app registered through '@azure/functions-core' (./core.js):
// its programming model, its functions and its hooks, kept apart from the module's own
// API so that only the runtime's host (./host.js) reads them back.
const HOOK_NAMES = Object.freeze(['preInvocation', 'postInvocation', 'appStart', 'appTerminate', 'log']);

export const state = { programmingModel: undefined, functions: new Map(), hooks: new Map(HOOK_NAMES.map((name) => [name, []])), locked: false, entryPoint: undefined };

export const registrations = {
  functions: () => [...state.functions.values()],
  model: () => state.programmingModel,
  /** Loads one entry-point file, which its registrations name as their scriptFile. */
  async during(file, load) {
    state.entryPoint = file;
    try {
      return await load();
    } finally {
      state.entryPoint = undefined;
    }
  },
  /** Start-up is over: registering more is refused, as the worker refuses it. */
  lock() { state.locked = true; },
  /** Runs the hooks of `name` in order, each awaited (the worker's src/hooks/executeHooks.ts). */
  async run(name, context) {
    for (const hook of [...state.hooks.get(name)]) await hook(context);
  },
  has(name) { return state.hooks.get(name).length > 0; },
};
