// Which inputs of the form show and which take input, from the choices made in
// it: a distribution's or an arrival process's own parameters, a toggled
// group's inputs, the per-request workload beside sessions, the SLO's joint
// attainment, and the run-until-decided box wherever the engine would refuse
// it. Reads the inputs only; the scenario is form.js's.
import { $ } from './dom.js';
import { targetBoxes } from './form-controls.js';
import { REQUEST_WORKLOAD_FIELDS, THINK_PARAMS, THINK_KEYS, arrivalRules, DIST_PARAMS, PARAMS } from './form-workload.js';
import { SLO_METRICS, SLO_JOINT, FIELDS } from './form-fields.js';

/** Shows the think-time inputs of the distribution chosen. */
export function showThinkParams() {
  const chosen = THINK_PARAMS[$('sess_think_dist').value] || Object.keys(THINK_KEYS);
  for (const p of Object.keys(THINK_KEYS)) $(`sess_think_${p}`).closest('.field').hidden = !chosen.includes(p);
}

/** Shows the inputs of the chosen arrival process's own parameters, and no other's. */
export function showArrivalFields() {
  const keys = arrivalRules($('sim_arrival').value).keys;
  for (const f of FIELDS) if (f.arrivalKey) $(f.id).closest('.field').hidden = !keys.includes(f.arrivalKey);
  showSteadyState();
}

/** The session fields: the per-request workload inputs are off while sessions are on. */
export function showSessionMode() {
  const on = $('sess_enabled').checked;
  for (const id of REQUEST_WORKLOAD_FIELDS) {
    $(id).disabled = on;
    $(id).closest('.field')?.classList.toggle('disabled', on);
  }
  // The shared prefix's own inputs follow its checkbox, and are off with it while sessions are on.
  setGroupEnabled('prefix', !on && $('prefix_enabled').checked);
  showSteadyState();
}

/** Why the engine would refuse serving.steady_state here ('' when it would not). */
function steadyStateRefusal() {
  // The engine's own rules (engine/scenario/read_simulation.cpp, read_steady_state_check,
  // and its refusal beside sessions): it judges arrivals over time under an SLO.
  if ($('sess_enabled').checked) return 'The run-until-decided check does not apply to sessions';
  const arrival = $('sim_arrival').value;
  if (!arrivalRules(arrival).judged) return `The run-until-decided check needs arrivals with a rate (not ${arrival})`;
  if (!SLO_METRICS.some((m) => String($(`sim_slo_${m}`).value).trim() !== '')) return 'The run-until-decided check needs an SLO to judge against';
  return '';
}

/**
 * The run-until-decided box is off, with the reason as its title, wherever the
 * engine would refuse it, rather than a located error until it is unticked;
 * the user's choice comes back with the conditions it needs.
 */
function showSteadyState() {
  const steady = $('sim_steady_state');
  const why = steadyStateRefusal();
  if (why && !steady.disabled) steady.dataset.wanted = steady.checked ? 'yes' : '';
  if (!why && steady.disabled) steady.checked = steady.dataset.wanted === 'yes';
  if (why) steady.checked = false;
  steady.disabled = Boolean(why);
  // Its help stays in its tooltip, after the reason when there is one.
  if (steady.dataset.help === undefined) steady.dataset.help = steady.title;
  steady.title = why ? `${why}. ${steady.dataset.help}` : steady.dataset.help;
  steady.closest('.field')?.classList.toggle('disabled', Boolean(why));
}

/**
 * Shows the parameter inputs of the distribution chosen for `prefix`; its token
 * count, empty under a distribution, says which one ("lognormal, mean 256").
 */
export function showDistParams(prefix) {
  const dist = $(`${prefix}_dist`).value;
  const chosen = DIST_PARAMS[dist] || PARAMS;
  for (const p of PARAMS) $(`${prefix}_${p}`).closest('.field').hidden = !chosen.includes(p);
  const value = (p) => (chosen.includes(p) ? String($(`${prefix}_${p}`).value).trim() : '');
  const [mean, min, max] = ['mean', 'min', 'max'].map(value);
  const shape = mean ? `, mean ${mean}` : min && max ? `, ${min}–${max}` : '';
  $(`${prefix}_tokens`).placeholder = dist && dist !== 'fixed' ? `${dist}${shape}` : '';
}

/** The attainment input applies only while some bound shown is judged jointly. */
export function showSloAttainment() {
  const joint = SLO_METRICS.some((m) => String($(`sim_slo_${m}`).value).trim() !== '' && $(`sim_slo_${m}_pct`).value === SLO_JOINT);
  $('sim_slo_attainment').disabled = !joint;
  $('sim_slo_attainment').closest('.field').classList.toggle('disabled', !joint);
  showSteadyState();  // it needs an SLO
}

/** Enables or disables the inputs of a toggled group (LoRA, speculative decoding, sessions, ...). */
export function setGroupEnabled(group, on) {
  for (const f of FIELDS) {
    if (f.group !== group) continue;
    const input = $(f.id);
    if (f.kind === 'targets') for (const box of targetBoxes(f.id)) box.disabled = !on;
    else input.disabled = !on;
    input.closest('.field')?.classList.toggle('disabled', !on);
  }
}

/** Shows the inputs that only apply to one choice of another (draft model, recompute options). */
export function showDependent() {
  $('spec_draft').closest('.field').hidden = $('spec_method').value !== 'draft';
  $('train_every_n').closest('.field').hidden = $('train_recompute').value !== 'full';
  $('train_rc_modules').closest('.field').hidden = $('train_recompute').value !== 'selective';
}
