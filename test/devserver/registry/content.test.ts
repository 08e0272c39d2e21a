// The .tf scanner behind module-content objects, on the HCL that trips naive scanners.
import assert from 'node:assert/strict';
import { describeFiles, type ModuleContent } from '../../../devserver/registry/content.js';

const TRICKY = `
# a comment with a brace {
// another } comment
/* block comment
   variable "commented_out" {}
*/
variable "tags" {
  description = "Tags with \\"quotes\\" and a brace } inside"
  type        = map(string)
  default = {
    Name = "x-\${lookup(var.map, "key", "{")}"
  }
}

variable "policy" {
  description = <<-EOT
    A heredoc description
      with an indented line and a brace {
    EOT
  default     = <<EOT
{ "Statement": [ { "Effect": "Allow" } }
EOT
}

resource "aws_iam_policy" "this" {
  policy = var.policy
}

output "template" {
  description = "%{ if true }yes%{ endif }"
  value       = "\${var.tags["Name"]}"
}

module "child" {
  source = "./modules/child"
}
`;

describe('devserver/registry: module content scanner', () => {
  it('REG-CONTENT-INPUTS, REG-CONTENT-OUTPUTS, REG-CONTENT-RESOURCES, REG-CONTENT-DEPENDENCIES: comments, escaped quotes, interpolations and heredocs do not derail it', () => {
    const { root } = describeFiles(new Map([['main.tf', TRICKY]]));
    const content = root as ModuleContent;
    assert.deepEqual(
      content.inputs.map((i) => i.name),
      ['tags', 'policy'],
    );
    assert.equal(content.inputs[0]!.description, 'Tags with "quotes" and a brace } inside');
    assert.match(content.inputs[0]!.default, /^\{[\s\S]*Name = [\s\S]*\}$/);
    assert.equal(content.inputs[1]!.description, 'A heredoc description\n  with an indented line and a brace {');
    assert.equal(content.inputs[1]!.required, false);
    assert.deepEqual(content.resources, [{ name: 'this', type: 'aws_iam_policy' }]);
    assert.deepEqual(content.outputs, [{ name: 'template', description: '%{ if true }yes%{ endif }' }]);
    assert.deepEqual(content.dependencies, [{ name: 'child', source: './modules/child', version: '' }]);
  });

  it('REG-CONTENT-PATH, REG-CONTENT-EMPTY, REG-DETAIL-SUBMODULES: the root path is empty, modules/<name> are submodules, a README alone is empty', () => {
    const { root, submodules } = describeFiles(
      new Map([
        ['README.md', '# only docs\n'],
        ['modules/a/main.tf', 'variable "x" {}\n'],
        ['modules/b/README.md', '# b\n'],
        ['examples/demo/main.tf', 'module "m" { source = "../.." }\n'],
      ]),
    );
    assert.equal(root.path, '');
    assert.equal(root.empty, true, 'no .tf file at the root');
    assert.equal((root as ModuleContent).readme, '# only docs\n');
    assert.deepEqual(
      submodules.map((m) => [m.path, m.empty]),
      [
        ['modules/a', false],
        ['modules/b', true],
      ],
    );
  });
});
