// @ts-self-types="./client_node.d.ts"
/**
 * `@kubernetes/client-node`, loaded only by runs with `workers.kubernetes` (and the tests of
 * them). Plain JavaScript with declarations of its own (client_node.d.ts): the package's
 * declarations would bring a newer copy of Node's type definitions into every program that
 * reaches this folder, changing the types of `node:assert` under every test. The specifier is
 * a variable so that the package stays out of the static module graph: in it, its dependency on
 * @types/node would become the Node types of every program type-checked with it.
 */

const CLIENT_NODE = "@kubernetes/client-node";

/** The package's module. */
export function loadClientNode() {
  return import(CLIENT_NODE);
}
