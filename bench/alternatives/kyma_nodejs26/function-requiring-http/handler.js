// The same hello world as a CommonJS function that requires node:http, as one calling
// http.request does, or one loading a library that does (Kyma writes an empty
// package.json next to an inline function, so its handler.js is CommonJS).
// The require comes after Kyma's runtime registered its instrumentations, so it
// switches the http one on: from then on every call records a server span.
require('node:http');

module.exports = {
  main(req, res) {
    res.send('Hello, world!');
  },
};
