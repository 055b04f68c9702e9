// Every platform nodejs26 knows, declared once: what recognises it, where its
// contract lives, the modules it supplies to a function (funcwsgi/compat/__init__.py's
// PLATFORMS is the Python side; tests/nodejs26/test_platforms_parity.py holds the
// two to the same names and variables). Plain data with no imports: sdk/register.js
// reads `provides` before anything else loads. docs: /work/notes/node-registry.md's
// layout is the contributor's guide; docs/platforms.md the user's.
//
// A platform record:
//   title      shown in the start-up line and the docs
//   page       its page under docs/
//   variables  host variables that alone mark it: name -> the value that marks it, or null for any value
//   module     its contract, lib/platforms/<module>.js (signal, locate, and load or invoker); none: the parameters decide
//   precedence its place in the order the signals are asked, first first
//   template   the `funcwsgi create --runtime nodejs26` template that writes a function in its layout
//   provides   bare specifier -> file under lib/platforms/, resolved only when the function has none installed
//   injects    bare specifier -> file under lib/platforms/, resolved always (what the platform's host injects)

const record = (fields) => Object.freeze({ variables: {}, module: null, precedence: null, template: null, provides: {}, injects: {}, ...fields });

export const PLATFORMS = Object.freeze({
  funcwsgi: record({ title: 'funcwsgi', page: 'nodejs26.md' }),
  kyma: record({ title: 'Kyma', page: 'migration-kyma-nodejs.md' }),
  kubeless: record({ title: 'Kubeless', page: 'migration-kubeless.md' }),
  'aws-lambda': record({
    title: 'AWS Lambda', page: 'migration-aws-lambda-nodejs.md',
    variables: { _HANDLER: null, AWS_LAMBDA_FUNCTION_NAME: null, AWS_EXECUTION_ENV: null },
    module: 'aws-lambda', precedence: 2, template: 'aws-lambda',
  }),
  azure: record({
    title: 'Azure Functions', page: 'migration-azure-nodejs.md',
    variables: { FUNCTIONS_WORKER_RUNTIME: 'node' },
    module: 'azure', precedence: 3, template: 'azure',
    provides: { '@azure/functions': 'azure/functions.js' },
    injects: { '@azure/functions-core': 'azure/core.js' },
  }),
  fission: record({
    title: 'Fission', page: 'migration-fission-nodejs.md',
    variables: { USERFUNCVOL: null },
    module: 'fission', precedence: 5, template: 'fission',
  }),
  'functions-framework': record({
    title: 'Functions Framework', page: 'migration-functions-framework-nodejs.md',
    variables: { FUNCTION_TARGET: null },
    module: 'functions-framework', precedence: 6, template: 'functions-framework',
    provides: { '@google-cloud/functions-framework': 'functions-framework/framework.js', '@google-cloud/functions-framework/testing': 'functions-framework/testing.js' },
  }),
});

export const PLATFORM_NAMES = Object.freeze(Object.keys(PLATFORMS));

/** The platforms recognised from their signals, in the order they are asked. */
export const RECOGNITION_ORDER = Object.freeze(
  PLATFORM_NAMES.filter((name) => PLATFORMS[name].precedence !== null).sort((a, b) => PLATFORMS[a].precedence - PLATFORMS[b].precedence),
);
