// A session's tokens and cost as the header shows them.

const n = (x) => (x ?? 0).toLocaleString("en-US");

export function cost(usage) {
  let text;
  if (usage.calls === 0) text = "$0";
  else if (usage.unpriced_calls && usage.unpriced_calls === usage.calls) text = "cost unknown";
  else if (usage.cost_usd > 0 && usage.cost_usd < 0.0001) text = "<$0.0001";
  else text = `$${usage.cost_usd.toFixed(usage.cost_usd < 0.01 ? 4 : 2)}`;
  if (usage.unpriced_calls && usage.unpriced_calls !== usage.calls) text += ` (+${usage.unpriced_calls} unpriced)`;
  return text;
}

/** Show `usage` (the session detail's) in `node`; nothing when there is none. */
export function renderUsage(node, usage) {
  if (!usage) {
    node.textContent = "";
    return;
  }
  node.textContent = `${n(usage.input_tokens)} in · ${n(usage.output_tokens)} out · ${cost(usage)}`;
  node.title = `${usage.calls} model calls; cache read ${n(usage.cache_read_tokens)}, reasoning ${n(usage.reasoning_tokens)} tokens`;
}
