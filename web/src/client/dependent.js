// Fields that follow their owners, so an edit does not leave the scenario
// inconsistent: the GPU picks its own link generation for the GPUs of a node;
// more than one GPU per node picks that link when none is set, and more than one
// node the GPU's own network (both from the GPU preset); in latency mode
// TP × PP resizes the node to match, and the GPU count sets TP × PP back (a
// serving simulation's TP stays within a node, training's DP takes the GPUs
// TP × PP × CP leave); and TP larger than a node proposes a multi-node layout
// (TP inside the node, PP across nodes). Each change is said
// in a note next to the fields. Runs before the form's own change handler, so
// the run that follows sees the updated fields.
import { $ } from './dom.js';
import { ownNodeGpus } from './gpu-links.js';

let gpus = new Map();
let links = [];       // intra-node interconnect presets
let networks = [];    // inter-node interconnect presets
let mode = () => 'latency';

const intOf = (id, dflt) => {
  const n = Number($(id).value);
  return Number.isInteger(n) && n > 0 ? n : dflt;
};

/** The GPU's own intra-node link: the preset's default_intra_node, the one place it is decided. */
export function linkFor(gpu) {
  if (!gpu || !gpu.default_intra_node) return null;
  return links.find((l) => l.id === gpu.default_intra_node) || null;
}

function say(text) {
  $('follow-note').textContent = text;
}

function linkName(l) {
  return l.name || l.id;
}

/** The GPU's own link for the node, when the node has more than one GPU. */
function followGpu() {
  const gpu = gpus.get($('gpu').value);
  const link = linkFor(gpu);
  if (!gpu || !link || intOf('gpus_per_node', 1) < 2 || $('intra_node').value === link.id) return;
  $('intra_node').value = link.id;
  say(`Intra-node link set to ${linkName(link)}, the link of the ${gpu.name || gpu.id}.`);
}

function followNodeSize() {
  if (intOf('gpus_per_node', 1) < 2 || $('intra_node').value) return;
  const gpu = gpus.get($('gpu').value);
  const link = linkFor(gpu);
  if (!link) return;
  $('intra_node').value = link.id;
  say(`More than one GPU per node needs a link between them: ${linkName(link)} chosen${gpu ? ` for the ${gpu.name || gpu.id}` : ''}.`);
}

/** The network between the GPU's nodes: the preset's default_inter_node, the one place it is decided. */
function networkFor(gpu) {
  if (!gpu || !gpu.default_inter_node) return null;
  return networks.find((l) => l.id === gpu.default_inter_node) || null;
}

/** Several nodes need a network: the GPU's own (a custom GPU naming none leaves it to the engine's located error). */
function followNodes() {
  if (intOf('nodes', 1) < 2 || $('inter_node').value) return;
  const gpu = gpus.get($('gpu').value);
  const net = networkFor(gpu);
  if (!net) return;
  $('inter_node').value = net.id;
  say(`Several nodes need a network between them: ${linkName(net)} chosen${gpu ? ` for the ${gpu.name || gpu.id}` : ''}.`);
}

/** Latency mode runs one replica on TP × PP GPUs: the node follows; TP beyond a node proposes nodes. */
function followParallelism() {
  const tp = intOf('tp', 1);
  const pp = intOf('pp', 1);
  const note = $('multinode-note');
  // The GPU's own server size (a custom GPU stating none: no proposal, the engine checks the node).
  const gpu = gpus.get($('gpu').value);
  const nodeSize = ownNodeGpus(gpu, links);
  note.hidden = nodeSize === undefined || tp <= nodeSize;
  if (nodeSize !== undefined && tp > nodeSize) {
    const nodes = Math.ceil(tp / nodeSize);
    $('multinode-text').textContent = `TP ${tp} needs ${tp} GPUs in one node, but a node holds ${nodeSize}: tensor parallelism ` +
      `stays inside a node. Proposed: TP ${nodeSize} in each node and PP ${nodes * pp} across ${nodes * pp} nodes.`;
    note.dataset.tp = String(nodeSize);
    note.dataset.pp = String(nodes * pp);
    return;
  }
  if (mode() !== 'latency') return;
  const want = tp * pp;
  const have = intOf('gpus_per_node', 1) * intOf('nodes', 1);
  if (want === have || (nodeSize !== undefined && want > nodeSize)) return;
  $('gpus_per_node').value = String(want);
  $('nodes').value = '';
  say(`GPUs per node set to ${want} (TP ${tp} × PP ${pp}).`);
  followNodeSize();
  followGpu();
}

// The TP the user last chose (typed, or the scenario's): the serving simulation's TP
// follows a smaller node down to the node's size and comes back up with it.
let wantedTp = 1;

/**
 * The GPU count (GPUs per node × nodes) sizes the parallelism: in latency mode TP × PP
 * is every GPU (TP within a node, else TP the node and PP the nodes); a serving
 * simulation's TP stays within a node (the replicas take the rest); training's DP is
 * the GPUs over TP × PP × CP. A count the others do not divide is left to the engine.
 */
function followGpuCount() {
  const gpn = intOf('gpus_per_node', 1);
  const total = gpn * intOf('nodes', 1);
  if (mode() === 'training') {
    const inner = ['train_tp', 'train_pp', 'train_cp'].map((id) => intOf(id, 1));
    const per = inner.reduce((a, b) => a * b, 1);
    const dp = total / per;
    if (!Number.isInteger(dp) || dp === intOf('train_dp', 1)) return;
    $('train_dp').value = String(dp);
    say(`DP set to ${dp}: ${total} GPUs over TP ${inner[0]} × PP ${inner[1]} × CP ${inner[2]}.`);
    return;
  }
  let tp = Math.min(wantedTp, gpn);
  let pp = intOf('pp', 1);
  if (mode() === 'latency') {
    if (total % pp === 0 && total / pp <= gpn) tp = total / pp;
    else [tp, pp] = [gpn, total / gpn];
  }
  if (tp === intOf('tp', 1) && pp === intOf('pp', 1)) return;
  $('tp').value = String(tp);
  $('pp').value = String(pp);
  $('multinode-note').hidden = true;
  say(mode() === 'latency' ? `TP ${tp} × PP ${pp}: the ${total} GPUs of one replica.` : `TP set to ${tp}, within a node of ${gpn} GPUs.`);
}

function applyMultiNode() {
  const note = $('multinode-note');
  const pp = Number(note.dataset.pp);
  const nodeSize = Number(note.dataset.tp);  // the node size the note proposed
  $('tp').value = note.dataset.tp;
  $('pp').value = String(pp);
  $('gpus_per_node').value = String(nodeSize);
  $('nodes').value = String(pp);
  note.hidden = true;
  followNodeSize();
  followGpu();
  followNodes();
  say(`${pp} nodes of ${nodeSize} GPUs: TP ${nodeSize} inside each node, PP ${pp} across them.`);
  $('tp').dispatchEvent(new Event('change', { bubbles: true }));
}

/** Wires the followers; `currentMode()` tells the form's mode ('latency' | 'simulate' | 'training'). */
export function init({ gpus: gpuList, interconnects, currentMode }) {
  gpus = new Map(gpuList.map((g) => [g.id, g]));
  links = interconnects.filter((i) => !i.scope || i.scope === 'intra_node');
  networks = interconnects.filter((i) => i.scope === 'inter_node');
  mode = currentMode;
  $('gpu').addEventListener('change', followGpu);
  // On 'input' too: a typed value runs after the pause, and the followers come first.
  for (const type of ['input', 'change']) {
    $('gpus_per_node').addEventListener(type, () => { followNodeSize(); followGpu(); followGpuCount(); });
    $('nodes').addEventListener(type, () => { followNodes(); followGpuCount(); });
    $('tp').addEventListener(type, () => { wantedTp = intOf('tp', 1); });
    for (const id of ['tp', 'pp']) $(id).addEventListener(type, followParallelism);
  }
  $('multinode-apply').addEventListener('click', applyMultiNode);
}

/** A freshly loaded scenario starts without notes. */
export function reset() {
  wantedTp = intOf('tp', 1);
  say('');
  $('multinode-note').hidden = true;
}
