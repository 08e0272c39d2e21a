// The loader hooks of loaded-modules.mjs: every URL loaded is posted back to the main thread.
let port;
export function initialize(data) {
  port = data.port;
}
export async function load(url, context, next) {
  port.postMessage(url);
  return next(url, context);
}
