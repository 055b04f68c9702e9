// What a SAM template.yaml says about the function served: its handler, code
// folder, payload format, routes, binary media types, timeout and memory
// (funcwsgi/compat/aws_lambda.py's read_template, read the same way). The
// template is read with the `yaml` package, CloudFormation's short tags
// (!Ref, !Sub, !GetAtt, ...) taken as the plain value they carry.
import fs from 'node:fs';
import path from 'node:path';
import { LoadError } from '../../errors.js';

export const TEMPLATE_NAMES = ['template.yaml', 'template.yml'];
/** CloudFormation's intrinsic functions in their short form (the long `Fn::` form is plain YAML). */
const SHORT_TAGS = ['Ref', 'Sub', 'GetAtt', 'Join', 'Select', 'Split', 'If', 'Equals', 'Not', 'And', 'Or', 'Condition', 'FindInMap', 'Base64', 'Cidr', 'GetAZs', 'ImportValue', 'Transform', 'ToJsonString', 'Length'];

const EMPTY = Object.freeze({ path: null, handler: null, codeUri: '', payloadFormat: null, routes: Object.freeze([]), binaryMediaTypes: Object.freeze([]), timeout: null, memorySize: null });

export function findTemplate(root) {
  for (const name of TEMPLATE_NAMES) {
    const file = path.join(root, name);
    if (fs.existsSync(file) && fs.statSync(file).isFile()) return file;
  }
  return null;
}

let tags = null;
async function yamlTags() {
  if (tags === null) {
    // Imported on first use: recognising platforms at start-up must not load a YAML parser for every function.
    tags = SHORT_TAGS.flatMap((name) => ['scalar', 'seq', 'map'].map((kind) => ({
      tag: `!${name}`,
      collection: kind === 'scalar' ? undefined : kind,
      resolve: kind === 'scalar' ? (value) => value : (value) => value.toJSON(),
    })));
  }
  return { parse: (await import('yaml')).parse, tags };
}

/** One API event of the template: its method, its path template and the pattern matching it. */
export function makeRoute(method, template) {
  const names = [];
  let source = '';
  for (const piece of template.split(/(\{[^}]+\})/)) {
    if (piece.startsWith('{') && piece.endsWith('}')) {
      const name = piece.slice(1, -1);
      names.push(name.replace(/\+$/, ''));
      source += name.endsWith('+') ? '(.+)' : '([^/]+)';
    } else {
      source += piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return Object.freeze({ method: method.toUpperCase(), path: template, pattern: new RegExp(`^${source}$`), names });
}

/** (route, its path parameters) of the first route matching, else null. */
export function matchRoute(routes, method, target) {
  for (const route of routes) {
    if (route.method !== 'ANY' && route.method !== method) continue;
    const found = route.pattern.exec(target);
    if (found !== null) return { route, parameters: Object.fromEntries(route.names.map((name, i) => [name, found[i + 1]])) };
  }
  return null;
}

/** The function of `root`'s SAM template whose Handler is `handler` (or its only function); EMPTY without a template. */
export async function readTemplate(root, handler) {
  const file = findTemplate(root);
  if (file === null) return EMPTY;
  const { parse, tags: customTags } = await yamlTags();
  let document;
  try {
    document = parse(fs.readFileSync(file, 'utf8'), { customTags, logLevel: 'error', uniqueKeys: false });
  } catch (error) {
    throw new LoadError(`${file} cannot be read as a SAM template: ${String(error.message).split('\n')[0]}`);
  }
  if (document === null || typeof document !== 'object') return EMPTY;
  const globals = document.Globals ?? {};
  const defaults = globals.Function ?? {};
  const functions = Object.values(document.Resources ?? {}).filter((resource) => resource?.Type === 'AWS::Serverless::Function').map((resource) => resource.Properties ?? {});
  const chosen = functions.filter((props) => handler === null || handler === undefined || (props.Handler ?? defaults.Handler) === handler);
  if (chosen.length === 0) return { ...EMPTY, path: file };
  const props = chosen[0];
  const binary = ((globals.Api ?? {}).BinaryMediaTypes ?? []).map((kind) => String(kind).replaceAll('~1', '/'));
  const routes = [];
  const formats = new Set();
  for (const event of Object.values(props.Events ?? {})) {
    const properties = event?.Properties ?? {};
    if (event?.Type === 'Api') formats.add('1.0');
    else if (event?.Type === 'HttpApi') formats.add(String(properties.PayloadFormatVersion ?? '2.0'));
    else continue;
    if (properties.Path) routes.push(makeRoute(String(properties.Method ?? 'any'), String(properties.Path)));
  }
  if (props.FunctionUrlConfig) formats.add('2.0');
  if (formats.size > 1) throw new LoadError(`${file} gives the function events of both payload formats (${[...formats].sort().join(', ')}); set LAMBDA_PAYLOAD_FORMAT`);
  const timeout = props.Timeout ?? defaults.Timeout;
  const memory = props.MemorySize ?? defaults.MemorySize;
  return Object.freeze({
    path: file,
    handler: props.Handler ?? defaults.Handler ?? null,
    codeUri: String(props.CodeUri ?? defaults.CodeUri ?? ''),
    payloadFormat: formats.size ? [...formats][0] : null,
    routes: Object.freeze(routes),
    binaryMediaTypes: Object.freeze(binary),
    timeout: typeof timeout === 'number' ? timeout : null,
    memorySize: Number.isInteger(memory) ? memory : null,
  });
}
