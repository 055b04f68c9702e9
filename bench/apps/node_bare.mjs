// The Node reference point: a hello world written straight against node:http, no framework.
// Run: PORT=8080 node bench/apps/node_bare.mjs
import { createServer } from 'node:http';

const BODY = Buffer.from('Hello, world!');
const HEADERS = { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': BODY.length };

createServer((request, response) => {
  response.writeHead(200, HEADERS);
  response.end(BODY);
}).listen(Number(process.env.PORT || 8080), process.env.HOST || '127.0.0.1');
