// The hello world of the nodejs26 runtime: `make run-nodejs26`, then
// curl localhost:8080/?name=Ada
import { getLogger } from 'sdk';

const log = getLogger();

export function main(req, res) {
  const name = req.query.name ?? 'world';
  log.info('greeting', { name });
  res.setHeader('X-Greeting', 'yes');
  return `Hello, ${name}!`;
}
