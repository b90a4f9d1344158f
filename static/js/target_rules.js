// The resolver's rules at a target, in the browser: what `opx/answers/resolve.py` computes on the
// server, evaluated from the view the server sends (`opx.answers.target_rules.payload`), so the
// figure at the target, how it was obtained and the multiple follow a moving target with no
// rerun. Each function names its Python counterpart; tests/e2e/test_target_rules_browser.py
// compares the two at random targets over random views, so a change to one is caught.
// docs/metrics.md, "The figure at the target", states the rules once.

export const SNAP = 1e-9;                       // opx.curves.frontier.SNAP

// -- numbers as people read them: opx.curves.metrics --------------------------------------------
function fixed(value, digits = 3) {              // metrics._fixed
  if (value === 0) return "0";
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(value))));
  const text = value.toFixed(decimals);
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}

function grouped(value) {                        // f"{value:,.0f}"
  return Math.round(value).toLocaleString("en-US");
}

function short(value, digits = 3) {              // metrics._short
  const a = Math.abs(value);
  for (const [threshold, suffix] of [[1e9, "B"], [1e6, "M"], [1e3, "k"]]) {
    if (a >= threshold * (1 - 0.5 * 10 ** -digits)) return fixed(value / threshold, digits) + suffix;
  }
  if (a >= 10 ** digits) return value.toFixed(0);
  return fixed(value, digits);
}

function money(value, digits = 3) {              // metrics.format_money
  const sign = value < 0 ? "-" : "";
  const a = Math.abs(value);
  if (a >= 100) return `${sign}$${grouped(a)}`;
  if (a === 0) return "$0";
  const decimals = Math.max(2, digits - 1 - Math.floor(Math.log10(a)));
  const [whole, cents] = a.toFixed(decimals).split(".");
  return `${sign}$${whole}.${cents.slice(0, 2) + cents.slice(2).replace(/0+$/, "")}`;
}

export function formatValue(value, metric, unit = false) {    // metrics.Metric.format
  if (value === null || !Number.isFinite(value)) return "–";
  if (metric.kind === "money") {
    const text = money(value);
    return text + (unit && metric.unit.startsWith("$") ? metric.unit.slice(1) : unit ? ` ${metric.unit}` : "");
  }
  if (metric.kind === "energy") {
    const text = Math.abs(value) >= 999.5 ? short(value) : fixed(value);
    return `${text} ${unit ? metric.unit : "J"}`;
  }
  const text = short(value);
  return unit ? `${text} ${metric.unit}` : text;
}

export function formatMultiple(value, metric = null) {         // metrics.format_multiple
  if (value === null || !Number.isFinite(value)) return "–";
  if (metric && metric.direction === "lower" && metric.better_word && value > 0) {
    if (value < 1) return `${formatMultiple(1 / value)} ${metric.better_word}`;
    return value > 1 ? `${formatMultiple(value)} ${metric.worse_word}` : "1× (the same)";
  }
  return value < 100 ? `${fixed(value, 3)}×` : `${grouped(value)}×`;
}

export function formatRange(lo, hi, metric = null) {           // metrics.format_range
  if (metric === null) return `${formatMultiple(lo).replace(/×$/, "")}-${formatMultiple(hi)}`;
  const a = formatValue(lo, metric), b = formatValue(hi, metric);
  if (a === b) return a;
  for (const suffix of ["k", "M", "B", " J"]) {
    if (a.endsWith(suffix) && b.endsWith(suffix)) return `${a.slice(0, -suffix.length)}-${b}`;
  }
  return `${a}-${b}`;
}

// -- the value of an envelope at an interactivity: opx.curves.frontier.values_at ------------------
function pchipSlopes(x, y) {                     // scipy.interpolate.PchipInterpolator's
  const n = x.length;
  const h = [], m = [];
  for (let i = 0; i < n - 1; i++) { h.push(x[i + 1] - x[i]); m.push((y[i + 1] - y[i]) / h[i]); }
  if (n === 2) return [m[0], m[0]];
  const d = new Array(n).fill(0);
  for (let k = 1; k < n - 1; k++) {
    const same = Math.sign(m[k]) === Math.sign(m[k - 1]) && m[k] !== 0 && m[k - 1] !== 0;
    if (same) {
      const w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1];
      d[k] = 1 / ((w1 / m[k - 1] + w2 / m[k]) / (w1 + w2));
    }
  }
  const edge = (h0, h1, m0, m1) => {
    let e = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
    if (Math.sign(e) !== Math.sign(m0)) e = 0;
    else if (Math.sign(m0) !== Math.sign(m1) && Math.abs(e) > 3 * Math.abs(m0)) e = 3 * m0;
    return e;
  };
  d[0] = edge(h[0], h[1], m[0], m[1]);
  d[n - 1] = edge(h[n - 2], h[n - 3], m[n - 2], m[n - 3]);
  return d;
}

export function valueAt(xs, ys, t) {             // frontier.value_at
  const n = xs.length;
  if (n === 0 || !Number.isFinite(t)) return { status: "no_data" };
  const lo = xs[0], hi = xs[n - 1];               // xs ascending (the server sorts them)
  if (t > hi * (1 + SNAP)) return { status: "not_reachable" };
  if (t < lo * (1 - SNAP)) return { status: "below_range" };
  for (let i = 0; i < n; i++) {
    if (Math.abs(xs[i] - t) <= SNAP * Math.abs(t)) return { status: "ok", value: ys[i], exact: true, neighbours: [i] };
  }
  let right = 0;
  while (right < n && xs[right] < t) right++;
  const i = right - 1;
  const d = pchipSlopes(xs, ys);
  const h = xs[i + 1] - xs[i], s = (t - xs[i]) / h;
  const h00 = (1 + 2 * s) * (1 - s) ** 2, h10 = s * (1 - s) ** 2;
  const h01 = s * s * (3 - 2 * s), h11 = s * s * (s - 1);
  const value = h00 * ys[i] + h10 * h * d[i] + h01 * ys[i + 1] + h11 * h * d[i + 1];
  return { status: "ok", value, exact: false, neighbours: [i, i + 1] };
}

// -- the rules: opx.answers.resolve --------------------------------------------------------------
function convert(side, tput) {                   // explorer._metric_value: scale * tput ** power
  const c = side.convert;
  if (c === null || tput === null || !Number.isFinite(tput)) return null;
  if (c.power < 0 && !(tput > 0)) return null;
  return c.scale * tput ** c.power;
}

function spreadOf(side, env, i) {                // resolve._spread_of
  if (env.runs[i] < 2) return null;
  return spreadIn(side, env.lo[i], env.hi[i], env.runs[i]);
}

function spreadIn(side, lo, hi, runs) {          // resolve._spread
  const ends = [convert(side, lo), convert(side, hi)];
  if (ends.includes(null)) return null;
  return { lo: Math.min(...ends), hi: Math.max(...ends), runs };
}

function answer(side, fields) {
  return { hardware: side.hardware, name: side.name, direction: side.direction, spread: null,
           configs: [], reason: "", fix: "", missing: "no_data", ...fields };
}

function fromEnvelope(side, env, target, kind) { // resolve._from_envelope
  if (!env || env.x.length === 0) return null;
  const v = valueAt(env.x, env.tput, target);
  if (v.status === "ok") {
    const value = convert(side, v.value);
    if (value === null) return null;
    const provs = [...new Set(v.neighbours.map((i) => env.provenance[i]))].join(" / ");
    if (v.exact) {
      const i = v.neighbours[0];
      return answer(side, { value, tput: v.value, kind, how: "point", configs: [env.text[i]],
                            provenance: provs, x: env.x[i], spread: spreadOf(side, env, i) });
    }
    return answer(side, { value, tput: v.value, kind, how: "interpolated",
                          configs: v.neighbours.map((i) => env.text[i]),
                          provenance: `interpolated between ${provs} points`, x: target,
                          spread: interpolatedSpread(side, env, v.neighbours, target) });
  }
  if (v.status === "below_range") {
    const value = convert(side, env.tput[0]);
    if (value === null) return null;
    return answer(side, { value, tput: env.tput[0], kind, how: "at_least", configs: [env.text[0]],
                          provenance: env.provenance[0], x: env.x[0], spread: spreadOf(side, env, 0) });
  }
  return null;
}

function interpolatedSpread(side, env, used, target) {   // resolve._interpolated_spread
  const runs = used.map((i) => env.runs[i]);
  if (Math.min(...runs) < 2) return null;
  const lo = valueAt(env.x, env.lo, target), hi = valueAt(env.x, env.hi, target);
  if (lo.status !== "ok" || hi.status !== "ok") return null;
  return spreadIn(side, lo.value, hi.value, Math.min(...runs));
}

export function resolve(side, target) {          // resolve.resolve
  const data = fromEnvelope(side, side.data, target, "data");
  if (data) return data;
  for (const [q, env] of side.stricter) {
    const i = env.x.findIndex((x) => x >= target * (1 - SNAP));
    const value = i >= 0 ? convert(side, env.tput[i]) : null;
    if (value !== null) {
      return answer(side, { value, tput: env.tput[i], kind: "data", how: "stricter",
                            configs: [env.text[i]], provenance: env.provenance[i], x: env.x[i],
                            spread: spreadOf(side, env, i), statistic: q });
    }
  }
  const sim = projection(side, target);
  if (sim.value !== undefined && sim.value !== null) return sim;
  return whyNone(side, target, [false, true]);
}

export function projection(side, target) {       // resolve.projection
  return fromEnvelope(side, side.projection, target, "simulated") || whyNone(side, target, [true]);
}

function whyNone(side, target, kinds) {          // resolve.why_none: the server's words
  const t = `${formatNumber(target)} tok/s/user`;
  const curves = [["data", side.data], ["simulated curve", side.projection]]
    .filter(([k, e]) => kinds.includes(k !== "data") && e && e.x.length);
  if (curves.length) {
    const tops = curves.map(([k, e]) => `${k} ${k === "data" ? "top" : "tops"} out at ${short(Math.max(...e.x))} tok/s/user`).join("; ");
    return answer(side, { value: null, how: "none", kind: "", missing: "not_reachable",
                          reason: `${side.name} cannot reach ${t} (${tops})`,
                          fix: "lower the target" + (side.pct === "mean" ? "" : " or choose another statistic") });
  }
  const none = kinds.length === 1 ? side.no_projection : side.no_figure;   // no target in them
  return answer(side, { value: null, how: "none", kind: "", reason: none.reason, fix: none.fix });
}

export function formatNumber(value) {            // models.view.format_number
  return String(value);                          // the shortest repr, as Python's repr(float)
}

// -- the words: resolve.Answer and frontier.Figure / Multiple --------------------------------------
export function bound(a) { return a.how === "at_least" || a.how === "stricter"; }

export function figureText(a, metric, unit = false) {           // frontier.Figure.text
  const sign = bound(a) ? (a.direction === "higher" ? "≥" : "≤") : "";
  const shown = `${sign} ${formatValue(a.value, metric, unit)}`.trim();
  return a.spread ? `${shown} (${formatRange(a.spread.lo, a.spread.hi, metric)}, ${a.spread.runs} runs)` : shown;
}

export function cell(a, metric) {                // resolve.Answer.cell / short
  return a.value === null ? a.reason : figureText(a, metric);
}

export function howText(a, target) {             // resolve.Answer.how_text
  const t = `${formatNumber(target)} tok/s/user`;
  if (a.value === null) return a.reason + (a.fix ? `; ${a.fix}` : "");
  const proj = a.kind === "simulated" ? "projection: " : "";
  const word = a.direction === "higher" ? "at least" : "at most";
  const names = a.configs;
  if (a.how === "point") return `${proj}the point ${names[0]}`;
  if (a.how === "interpolated") return `${proj}interpolated between ${names[0]} and ${names[1]}`;
  if (a.how === "at_least") return `${proj}${word} this: ${names[0]} is faster than ${t} and so meets it (the target is below the range)`;
  return `${word} this: ${names[0]} meets ${t} at a stricter statistic, so it meets it at this one too`;
}

function provenanceNames(p) {                    // frontier.provenance_names
  let text = p.split(" (")[0];
  if (text.startsWith("interpolated between ") && text.endsWith(" points")) text = text.slice(21, -7);
  return text.replace(/,/g, " / ").split(" / ").map((s) => s.trim()).filter(Boolean);
}

function kindOf(p) {                             // frontier.kind_of
  const names = provenanceNames(p);
  return names.length === 1 && names[0] === "simulated" ? "simulated" : "data";
}

export function multipleAtTarget(a, b, target, metric) {       // resolve.multiple_at_target
  const t = `${formatNumber(target)} tok/s/user`;
  const missing = [b, a].filter((s) => s.value === null).map((s) => s.reason + (s.fix ? ` (${s.fix})` : ""));
  if (missing.length) return { value: null, reason: [...new Set(missing)].join("; ") };
  if (!b.value) return { value: null, reason: `${b.name} is zero at ${t}` };
  return { value: a.value / b.value, a, b, metric,
           bounds: [a, b].filter(bound).map((s) => s.name) };
}

function kindText(p) {                           // frontier.Figure.kind_text
  return [...new Set(provenanceNames(p))].join(" / ") || kindOf(p);
}

export function multipleText(m) {                // frontier.Multiple.text
  if (m.value === null) return m.reason;
  const ka = kindOf(m.a.provenance), kb = kindOf(m.b.provenance);
  const kind = ka === kb ? ka : "mixed";
  let basis = `${kindText(m.a.provenance)} vs ${kindText(m.b.provenance)}`;
  if (kind === "mixed") basis = `mixed: ${basis}`;
  if (m.bounds.length === 2) basis += "; both figures are at-least figures";
  else if (m.bounds.length) basis += `; ${m.bounds[0]}'s figure is an at-least figure`;
  const said = [kind !== "data" || m.bounds.length ? basis : "", rangeText(m)].filter(Boolean);
  const number = formatMultiple(m.value, m.metric);
  return said.length ? `${number} (${said.join("; ")})` : number;
}

function rangeText(m) {                          // frontier.Multiple.range_text
  if (!(m.a.spread || m.b.spread)) return "";
  const [alo, ahi] = m.a.spread ? [m.a.spread.lo, m.a.spread.hi] : [m.a.value, m.a.value];
  const [blo, bhi] = m.b.spread ? [m.b.spread.lo, m.b.spread.hi] : [m.b.value, m.b.value];
  if (!(blo && bhi)) return "";
  const ends = [alo / bhi, ahi / blo].sort((x, y) => x - y);
  if (m.metric && m.metric.direction === "lower") {
    return `${formatMultiple(ends[0], m.metric)} to ${formatMultiple(ends[1], m.metric)} over the repeated runs`;
  }
  return `${formatRange(ends[0], ends[1])} over the repeated runs`;
}
