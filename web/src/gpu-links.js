// A GPU preset's own links, in one place for the sweep and the Search tab (neither
// imports the other): the intra-node link and the inter-node network its preset names.

/** The GPU's own intra-node link: its preset's default_intra_node (the one source; undefined for a custom GPU naming none). */
export function defaultIntraNode(gpu) {
  return (gpu && gpu.default_intra_node) || undefined;
}

/** The network between the GPU's nodes: its preset's default_inter_node (the one source; undefined for a custom GPU naming none). */
export function defaultInterNode(gpu) {
  return (gpu && gpu.default_inter_node) || undefined;
}
