// A GPU preset's own links and its group, in one place for the form, the sweep and
// the Search tab (none imports another): the intra-node link and the inter-node
// network its preset names, and its vendor and generation ("NVIDIA Hopper").

/** The GPU's own intra-node link: its preset's default_intra_node (the one source; undefined for a custom GPU naming none). */
export function defaultIntraNode(gpu) {
  return (gpu && gpu.default_intra_node) || undefined;
}

/** The network between the GPU's nodes: its preset's default_inter_node (the one source; undefined for a custom GPU naming none). */
export function defaultInterNode(gpu) {
  return (gpu && gpu.default_inter_node) || undefined;
}

/**
 * The node size to propose for the GPU: its preset's node_gpus (the GPUs one server
 * of the part holds), no more than its link's domain joins (`link`: the interconnect
 * preset, when known). undefined for a custom GPU that states none.
 */
export function nodeGpus(gpu, link) {
  const n = gpu && Number.isInteger(gpu.node_gpus) && gpu.node_gpus > 0 ? gpu.node_gpus : undefined;
  if (n === undefined) return undefined;
  return link && Number.isInteger(link.domain_gpus) && link.domain_gpus > 0 ? Math.min(n, link.domain_gpus) : n;
}

/**
 * The node size to propose for the GPU on its own intra-node link (its
 * default_intra_node, looked up in `links`, the interconnect presets): nodeGpus
 * capped by that link's domain (an H100 NVL's bridge pairs 2, not its server's 8).
 * The one place the Search tab, the sweep and the form take a node size from.
 */
export function ownNodeGpus(gpu, links = []) {
  const id = defaultIntraNode(gpu);
  return nodeGpus(gpu, id ? links.find((l) => l.id === id) : undefined);
}

const VENDOR_LABEL = { nvidia: 'NVIDIA', amd: 'AMD' };
const ARCH_LABEL = { cdna3: 'CDNA 3', cdna4: 'CDNA 4' };

/** The GPU's vendor and generation ("NVIDIA Hopper", "AMD CDNA 3"), from its preset's vendor and architecture fields. */
export function gpuGroupLabel(gpu) {
  const vendor = String(gpu.vendor || 'other');
  const arch = String(gpu.architecture || 'other');
  return `${VENDOR_LABEL[vendor] || vendor} ${ARCH_LABEL[arch] || arch.charAt(0).toUpperCase() + arch.slice(1)}`;
}

/** The GPUs in one group per vendor and generation: [[label, gpus]], groups in name order, GPUs in preset order. */
export function groupGpus(gpus) {
  const groups = new Map();
  for (const g of gpus) {
    const label = gpuGroupLabel(g);
    if (!groups.has(label)) groups.set(label, []);
    groups.get(label).push(g);
  }
  return [...groups.keys()].sort().map((label) => [label, groups.get(label)]);
}
