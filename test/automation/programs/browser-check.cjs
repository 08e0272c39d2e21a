// A CommonJS Pulumi program (the format of a default Pulumi TypeScript project): one BrowserCheck of the page the
// test serves, with the test's arguments as inputs; stack outputs are the check's outputs.
const pulumi = require('@pulumi/pulumi');
const { BrowserCheck } = require('gantry/providers');

module.exports = async function ({ url, secretUrl, title, titleMatch, status, triggers }) {
  const check = new BrowserCheck('site', { url: secretUrl ? pulumi.secret(url) : url, title, titleMatch, status, triggers });
  return {
    passed: check.passed,
    pageTitle: check.pageTitle,
    httpStatus: check.httpStatus,
    statusFrom: check.statusFrom,
    finalUrl: check.finalUrl,
    checkedAt: check.checkedAt,
  };
};
