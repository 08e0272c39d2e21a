// The dev servers' HTTP kit: what every embedded server needs from node:http and nothing of any protocol. Each server
// stays its own reading of its specification: it names its failures, renders them in its wire format, picks its
// reply style and its routes' templates; the kit only carries them out.
export { HttpFailure } from './failure.js';
export { countBody, mediaType, parseForm, parseJson, readBody, type BodyLimit, type JsonRules } from './body.js';
export { sendReply, sendText, type Reply, type ReplyStyle } from './reply.js';
export { sendFile, type FileRange } from './send-file.js';
export { RouteTable, type RouteEntry, type RouteOptions, type RouteResult } from './routes.js';
export { close, listen } from './listen.js';
export { httpUrl } from './url.js';
