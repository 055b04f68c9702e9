// The lines the runtime prints once when it starts (funcwsgi/startup.py): the
// first before the function is imported, the other three once it has loaded, so
// a function that fails to load never prints "Starting".
import { handlerPath } from './config.js';

/** Platforms called through the runtime's own signatures: no line says which contract. */
const OWN_CONTRACTS = new Set(['funcwsgi', 'kyma', 'kubeless']);

export function startupLines(config) {
  return [
    `Importing function sources from ${handlerPath(config)}:${config.handlerFunctionName}`,
    ...(OWN_CONTRACTS.has(config.handlerPlatform ?? 'funcwsgi') ? [] : [`Calling it with the ${config.handlerPlatform} contract (HANDLER_PLATFORM chooses another)`]),
    config.traceCollectorEndpoint ? `Tracing configured with endpoint ${config.traceCollectorEndpoint}` : 'Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set',
    config.publisherProxyAddress ? `Publisher Proxy available on address ${config.publisherProxyAddress}` : 'Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set',
    `Starting ${config.funcRuntime} server ${config.serverHost}:${config.serverPort}`,
  ];
}

export function writeLines(lines) {
  process.stdout.write(lines.map((line) => `${line}\n`).join(''));
}
