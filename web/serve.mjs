#!/usr/bin/env node
// Dependency-free static file server for the built page.
// Usage: node web/serve.mjs <dir> [port=8080]   (binds 127.0.0.1)
// Prints exactly one line, `Sightline: http://127.0.0.1:PORT/`, once listening.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

const root = path.resolve(process.argv[2] || '.');
const port = Number(process.argv[3] || 8080);
const host = '127.0.0.1';

if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`serve.mjs: invalid port '${process.argv[3]}' (1-65535)`);
  process.exit(2);
}
if (!fs.existsSync(path.join(root, 'index.html'))) {
  console.error(`serve.mjs: ${root} has no index.html; build the page first (node web/build.mjs build/web)`);
  process.exit(2);
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
  res.end(body);
}

const server = http.createServer((req, res) => {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
    return;
  }
  let pathname;
  try {
    pathname = decodeURIComponent(new URL(req.url, `http://${host}`).pathname);
  } catch {
    send(res, 400, 'Bad Request\n');
    return;
  }
  if (pathname.includes('\0')) {
    send(res, 400, 'Bad Request\n');
    return;
  }
  let file = path.resolve(root, '.' + pathname);
  if (file !== root && !file.startsWith(root + path.sep)) {
    send(res, 403, 'Forbidden\n');
    return;
  }
  fs.stat(file, (err, st) => {
    if (!err && st.isDirectory()) {
      file = path.join(file, 'index.html');
      st = fs.existsSync(file) ? fs.statSync(file) : null;
    }
    if (err || !st || !st.isFile()) {
      send(res, 404, 'Not Found\n');
      return;
    }
    const type = MIME[path.extname(file).toLowerCase()] || 'application/octet-stream';
    res.writeHead(200, {
      'Content-Type': type,
      'Content-Length': st.size,
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    fs.createReadStream(file).on('error', () => res.destroy()).pipe(res);
  });
});

server.on('error', (err) => {
  console.error(`serve.mjs: ${err.code === 'EADDRINUSE' ? `port ${port} is in use` : err.message}`);
  process.exit(1);
});
server.listen(port, host, () => {
  console.log(`Sightline: http://${host}:${port}/`);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
