// Preloaded with `node -r` in front of the TypeScript SDK example servers: binds every
// listening socket to 127.0.0.1 (the examples listen on all interfaces) and prints the
// address actually bound on stderr, so tests can give them port 0 and read the port:
//   loopback: listening on http://127.0.0.1:PORT
'use strict';
const net = require('node:net');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once('listening', () => {
    const a = this.address();
    if (a && typeof a === 'object') {
      process.stderr.write(`loopback: listening on http://127.0.0.1:${a.port}\n`);
    }
  });
  const first = args[0];
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    return listen.call(this, { ...first, host: '127.0.0.1' }, ...args.slice(1));
  }
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const callback = args.find((a) => typeof a === 'function');
    return listen.call(this, Number(first), '127.0.0.1', callback);
  }
  return listen.apply(this, args);
};
