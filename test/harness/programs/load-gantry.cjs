'use strict';
// What `tsc` emits for a default Pulumi TypeScript project (CommonJS) whose index.ts reads
//   import * as gantry from "gantry"; import * as providers from "gantry/providers";
// gantry is an ES module: Node >= 20.19 loads it through require().
Object.defineProperty(exports, '__esModule', { value: true });
exports.providerExports = exports.libraryExports = exports.version = void 0;
const gantry = require('gantry');
const providers = require('gantry/providers');
exports.version = gantry.version;
exports.libraryExports = Object.keys(gantry).sort();
exports.providerExports = Object.keys(providers).sort();
