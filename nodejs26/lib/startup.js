// The lines the runtime prints once when it starts (funcwsgi/startup.py): the
// first before the function is imported, the other three once it has loaded, so
// a function that fails to load never prints "Starting".
import { handlerPath } from './config.js';

export function startupLines(config) {
  return [
    `Importing function sources from ${handlerPath(config)}:${config.handlerFunctionName}`,
    config.traceCollectorEndpoint ? `Tracing configured with endpoint ${config.traceCollectorEndpoint}` : 'Tracing disabled: TRACE_COLLECTOR_ENDPOINT is not set',
    config.publisherProxyAddress ? `Publisher Proxy available on address ${config.publisherProxyAddress}` : 'Publisher Proxy not configured: PUBLISHER_PROXY_ADDRESS is not set',
    `Starting ${config.funcRuntime} server ${config.serverHost}:${config.serverPort}`,
  ];
}

export function writeLines(lines) {
  process.stdout.write(lines.map((line) => `${line}\n`).join(''));
}
