// Preloaded (node --import) into processes whose servers listen without naming a host: the
// Functions Framework's own server and @azure/functions' HTTP stream proxy bind every
// interface, and the tests listen on loopback only. A listen() given no host gets 127.0.0.1.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  if (typeof args[0] === 'function' || args.length === 0) return listen.call(this, 0, '127.0.0.1', ...args);
  if ((typeof args[0] === 'number' || typeof args[0] === 'string') && typeof args[1] !== 'string') return listen.call(this, args[0], '127.0.0.1', ...args.slice(1));
  return listen.apply(this, args);
};
