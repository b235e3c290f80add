// The Hashlock order explorer: one ES module, no framework, no build step. It reads the public JSON
// of /explorer/api and the event streams, and builds every node through the DOM, with all text as
// text nodes: nothing an order carries is ever parsed as markup.

const API = '/explorer/api';
const PER_PAGE = 20;
const ORDER_PATH = /^\/explorer\/orders\/([^/]+)\/?$/;

/** What each status means to someone watching the order. */
const STATUS_TEXT = {
  created: ['Created', 'Waiting for the source deposit'],
  expired: ['Expired', 'No deposit arrived before the deadline'],
  initiate_detected: ['Deposit seen', 'The source deposit is on its way to confirmation'],
  initiated: ['Deposit confirmed', 'The solver funds the destination next'],
  awaiting_redeem: ['Destination funded', 'Waiting for the destination redeem'],
  awaiting_refund: ['Awaiting refund', 'The source can be refunded'],
  redeem_detected: ['Redeem seen', 'The redeem is on its way to confirmation'],
  redeemed: ['Redeemed', 'The receiver is paid; the solver redeems the source'],
  completed: ['Completed', 'Both sides are settled'],
  refund_detected: ['Refund seen', 'The refund is on its way to confirmation'],
  refunded: ['Refunded', 'The deposit went back to its sender'],
};

const STATUS_TONE = {
  created: 'waiting',
  expired: 'stopped',
  initiate_detected: 'moving',
  initiated: 'moving',
  awaiting_redeem: 'moving',
  awaiting_refund: 'warning',
  redeem_detected: 'moving',
  redeemed: 'done',
  completed: 'done',
  refund_detected: 'warning',
  refunded: 'stopped',
};

// ---------------------------------------------------------------------------------------------
// Building nodes

/**
 * An element with attributes and children; strings become text nodes.
 * @param {string} tag
 * @param {Record<string, string | undefined>} [attrs]
 * @param {Array<Node | string | null | undefined | false>} children
 * @returns {HTMLElement}
 */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined) node.setAttribute(name, value);
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

/** @param {string} text */
const code = (text) => el('code', {}, text);

/** @param {HTMLElement} parent @param {Array<Node | string>} children */
function replace(parent, ...children) {
  parent.replaceChildren(...children);
}

// ---------------------------------------------------------------------------------------------
// Formatting: amounts in string arithmetic (never floats), times as written by the API

/**
 * Base units as the asset's units: "100000" with 8 decimals is "0.001".
 * @param {string} baseUnits
 * @param {number} decimals
 */
export function formatUnits(baseUnits, decimals) {
  if (!/^[0-9]+$/.test(baseUnits)) return baseUnits;
  const digits = baseUnits.replace(/^0+(?=.)/, '').padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === '' ? grouped : `${grouped}.${fraction}`;
}

/**
 * "2026-01-02T03:04:05.123456Z" as "2026-01-02 03:04:05 UTC".
 * @param {string | null} rfc3339
 */
function formatTime(rfc3339) {
  if (!rfc3339) return '';
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(rfc3339);
  return m ? `${m[1]} ${m[2]} UTC` : rfc3339;
}

/** @param {number} ms */
function formatDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = ms / 1000;
  if (s < 60) return `+${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  if (s < 3600) return `+${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `+${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** @param {string} id */
const shortId = (id) => (id.length > 16 ? `${id.slice(0, 8)}…${id.slice(-6)}` : id);

/** @param {string} status */
function statusBadge(status, big = false) {
  const [label] = STATUS_TEXT[status] ?? [status];
  return el('span', { class: `badge tone-${STATUS_TONE[status] ?? 'waiting'}${big ? ' big' : ''}`, 'data-status': status }, label);
}

// ---------------------------------------------------------------------------------------------
// Data

/**
 * The result of one of the explorer's JSON reads; its error message otherwise.
 * @param {string} url
 */
async function getJson(url) {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  let body;
  try {
    body = await res.json();
  } catch {
    throw new Error(`the server answered ${res.status} without JSON`);
  }
  if (!res.ok || body.status !== 'Ok') throw new Error(body.error ?? `the server answered ${res.status}`);
  return body.result;
}

/** Chains by key and assets by id, for names, explorer links, symbols and decimals. */
const registry = { chains: new Map(), assets: new Map() };

async function loadRegistry() {
  const { chains, assets } = await getJson(`${API}/registry`);
  for (const c of chains) registry.chains.set(c.chain, c);
  for (const a of assets) registry.assets.set(a.id, a);
}

/** @param {{asset: string, chain: string}} swap @param {string} amount */
function amountText(swap, amount) {
  const asset = registry.assets.get(swap.asset);
  return asset ? `${formatUnits(amount, asset.decimals)} ${asset.symbol.toUpperCase()}` : `${amount} (base units of ${swap.asset})`;
}

/** @param {string} chainKey */
const chainName = (chainKey) => registry.chains.get(chainKey)?.name ?? chainKey;

/**
 * A transaction hash linked to its chain's explorer (`<explorer_url>/tx/<hash>`); plain when the
 * chain names no explorer. A Bitcoin-family initiate lists its funding txids, comma-separated.
 * @param {string} chainKey
 * @param {string} hashes
 */
function txLinks(chainKey, hashes) {
  const base = registry.chains.get(chainKey)?.explorer_url ?? '';
  const linkable = /^https?:\/\/[^\s]+$/.test(base);
  const parts = hashes.split(',').map((h) => h.trim()).filter((h) => h !== '');
  return el(
    'span',
    { class: 'hashes' },
    ...parts.map((h) =>
      linkable
        ? el('a', { class: 'hash', href: `${base.replace(/\/+$/, '')}/tx/${encodeURIComponent(h)}`, target: '_blank', rel: 'noopener noreferrer' }, h)
        : el('code', { class: 'hash' }, h),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Live updates: Server-Sent Events, reconnected by the browser with Last-Event-ID

/**
 * @param {string} url
 * @param {(event: {id: string, order_id: string, status: string, created_at: string, order: any}) => void} onEvent
 */
function follow(url, onEvent) {
  const live = document.getElementById('live');
  const source = new EventSource(url);
  source.onopen = () => live?.removeAttribute('hidden');
  source.onerror = () => live?.setAttribute('hidden', '');
  source.onmessage = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    if (event && typeof event.order_id === 'string' && event.order) onEvent(event);
  };
  window.addEventListener('pagehide', () => source.close());
  return source;
}

// ---------------------------------------------------------------------------------------------
// The order list: recent orders (live) and search results

/** @param {any} order */
function orderRow(order) {
  const s = order.source_swap;
  const d = order.destination_swap;
  const link = el('a', { href: `/explorer/orders/${order.order_id}`, class: 'order-link' }, code(shortId(order.order_id)));
  return el(
    'tr',
    { 'data-order-id': order.order_id },
    el('td', {}, link),
    el('td', {}, statusBadge(order.status)),
    el('td', {}, el('div', { class: 'amount' }, amountText(s, s.amount)), el('div', { class: 'muted small' }, chainName(s.chain))),
    el('td', { class: 'arrow', 'aria-hidden': 'true' }, '→'),
    el('td', {}, el('div', { class: 'amount' }, amountText(d, d.amount)), el('div', { class: 'muted small' }, chainName(d.chain))),
    el('td', { class: 'muted small' }, formatTime(order.created_at)),
  );
}

/** @param {any[]} orders */
function orderTable(orders) {
  const head = el(
    'thead',
    {},
    el('tr', {}, ...['Order', 'Status', 'From', '', 'To', 'Created'].map((h) => el('th', {}, h))),
  );
  return el('table', { class: 'orders', id: 'orders' }, head, el('tbody', {}, ...orders.map(orderRow)));
}

/** @param {{page: number, total_pages: number}} result @param {string | null} q */
function pager(result, q) {
  if (result.total_pages <= 1) return null;
  const href = (/** @type {number} */ page) => {
    const params = new URLSearchParams();
    if (q) params.set('q', q);
    params.set('page', String(page));
    return `/explorer?${params}`;
  };
  return el(
    'nav',
    { class: 'pager' },
    result.page > 1 ? el('a', { href: href(result.page - 1) }, '← Newer') : el('span', {}, ''),
    el('span', { class: 'muted' }, `Page ${result.page} of ${result.total_pages}`),
    result.page < result.total_pages ? el('a', { href: href(result.page + 1) }, 'Older →') : el('span', {}, ''),
  );
}

const MATCH_TEXT = {
  tx_hash: 'with transaction',
  address: 'with address',
};

/** @param {HTMLElement} view @param {string | null} q @param {number} page */
async function showList(view, q, page) {
  const params = new URLSearchParams({ page: String(page), per_page: String(PER_PAGE) });
  if (q) params.set('q', q);
  let result;
  try {
    result = await getJson(`${API}/orders?${params}`);
  } catch (err) {
    replace(view, el('h1', {}, q ? 'Search' : 'Recent orders'), el('p', { class: 'error', role: 'alert' }, `${q ? 'Search failed' : 'The orders could not be loaded'}: ${err.message}`));
    return;
  }
  if (result.match === 'order' && result.data.length === 1) {
    location.replace(`/explorer/orders/${result.data[0].order_id}`);
    return;
  }
  if (result.match === 'none') {
    replace(
      view,
      el('h1', {}, 'Search'),
      el(
        'p',
        { class: 'error', role: 'alert' },
        'No order matches ',
        code(q ?? ''),
        '. Search by an order id (64 hexadecimal characters), an address on either side of a swap, or a transaction hash.',
      ),
    );
    return;
  }
  const title = q ? el('h1', {}, 'Search') : el('h1', {}, 'Recent orders');
  const summary = q
    ? el('p', { class: 'muted', id: 'summary' }, `${result.total_items} order${result.total_items === 1 ? '' : 's'} ${MATCH_TEXT[result.match] ?? 'matching'} `, code(q))
    : el('p', { class: 'muted', id: 'summary' }, result.total_items === 0 ? 'No orders yet.' : 'Newest first; new orders and status changes appear as they happen.');
  const table = orderTable(result.data);
  replace(view, title, summary, table, pager(result, q) ?? '');
  if (!q && page === 1) followRecent(table);
  else followListed(table);
}

/** Recent orders: a new order comes in at the top, a known one is updated in place. @param {HTMLElement} table */
function followRecent(table) {
  const body = table.querySelector('tbody');
  follow(`${API}/events`, (event) => {
    const row = orderRow(event.order);
    const known = body.querySelector(`tr[data-order-id="${event.order_id}"]`);
    if (known) known.replaceWith(row);
    else {
      body.prepend(row);
      while (body.rows.length > PER_PAGE) body.lastElementChild?.remove();
    }
    row.classList.add('flash');
  });
}

/** Search results: the orders listed are updated in place. @param {HTMLElement} table */
function followListed(table) {
  const body = table.querySelector('tbody');
  follow(`${API}/events`, (event) => {
    const known = body.querySelector(`tr[data-order-id="${event.order_id}"]`);
    if (!known) return;
    const row = orderRow(event.order);
    known.replaceWith(row);
    row.classList.add('flash');
  });
}

// ---------------------------------------------------------------------------------------------
// One order: both legs, its timeline, live

/**
 * @param {string} title
 * @param {any} swap
 * @param {string} role
 */
function legCard(title, swap, role) {
  const rows = [];
  const row = (/** @type {string} */ label, /** @type {Node | string} */ value) => rows.push(el('dt', {}, label), el('dd', {}, value));
  row('Chain', chainName(swap.chain));
  row('Amount', el('span', { class: 'amount big', 'data-field': `${role}-amount` }, amountText(swap, swap.amount)));
  if (swap.filled_amount !== '0' && swap.filled_amount !== swap.amount) row('Received', amountText(swap, swap.filled_amount));
  row('Initiator', code(swap.initiator));
  row('Redeemer', code(swap.redeemer));
  if (swap.delegate) row('Delegate key', code(swap.delegate));
  row('Swap id', code(swap.swap_id));
  row('Timelock', `${swap.timelock} blocks`);
  const confirmations = `${swap.current_confirmations} / ${swap.required_confirmations}`;
  row('Confirmations', el('span', { 'data-field': `${role}-confirmations` }, swap.initiate_tx_hash ? confirmations : `– / ${swap.required_confirmations}`));
  for (const [label, hash, block, time] of [
    ['Initiate', swap.initiate_tx_hash, swap.initiate_block_number, swap.initiate_timestamp],
    ['Redeem', swap.redeem_tx_hash, swap.redeem_block_number, swap.redeem_timestamp],
    ['Refund', swap.refund_tx_hash, swap.refund_block_number, swap.refund_timestamp],
  ]) {
    if (!hash) continue;
    const where = block && block !== '0' ? `block ${block}${time ? `, ${formatTime(time)}` : ''}` : 'not yet mined';
    row(`${label} tx`, el('span', { 'data-field': `${role}-${label.toLowerCase()}` }, txLinks(swap.chain, hash), el('span', { class: 'muted small' }, ` ${where}`)));
  }
  return el('section', { class: 'card leg', 'data-leg': role }, el('h2', {}, title), el('dl', {}, ...rows));
}

/**
 * The recorded status changes, each with its time; the current status last and marked.
 * @param {Array<{id: string, status: string, created_at: string}>} events
 * @param {string} current
 */
function timeline(events, current) {
  const steps = events.map((e) => ({ status: e.status, at: e.created_at }));
  if (steps.length === 0 || steps[steps.length - 1].status !== current) steps.push({ status: current, at: null });
  const items = steps.map((step, i) => {
    const [label, meaning] = STATUS_TEXT[step.status] ?? [step.status, ''];
    const previous = i > 0 ? steps[i - 1].at : null;
    const gap = step.at && previous ? formatDuration(Date.parse(step.at) - Date.parse(previous)) : '';
    const last = i === steps.length - 1;
    return el(
      'li',
      { class: `step tone-${STATUS_TONE[step.status] ?? 'waiting'}${last ? ' current' : ''}`, 'data-status': step.status },
      el('div', { class: 'step-title' }, label, gap ? el('span', { class: 'gap' }, gap) : null),
      el('div', { class: 'muted small' }, meaning),
      el('time', { class: 'small', ...(step.at ? { datetime: step.at } : {}) }, step.at ? formatTime(step.at) : 'now'),
    );
  });
  return el('ol', { class: 'timeline', id: 'timeline' }, ...items);
}

/** @param {{order: any, events: any[]}} state */
function orderView(state) {
  const { order, events } = state;
  const s = order.source_swap;
  const d = order.destination_swap;
  const [, meaning] = STATUS_TEXT[order.status] ?? ['', ''];
  const head = el(
    'section',
    { class: 'order-head' },
    el('div', { class: 'muted small' }, 'Order'),
    el('h1', { class: 'order-id' }, code(order.order_id)),
    el('div', { class: 'status-line' }, statusBadge(order.status, true), el('span', { class: 'muted', id: 'status-meaning' }, meaning)),
    el(
      'p',
      { class: 'route' },
      el('strong', {}, amountText(s, s.amount)),
      ` on ${chainName(s.chain)}  →  `,
      el('strong', {}, amountText(d, d.amount)),
      ` on ${chainName(d.chain)}`,
    ),
    el(
      'p',
      { class: 'muted small' },
      `Created ${formatTime(order.created_at)} · deposit deadline ${formatTime(new Date(order.deadline * 1000).toISOString())}`,
      order.integrator ? ` · via ${order.integrator}` : '',
    ),
  );
  const legs = el('div', { class: 'legs' }, legCard('Source: the sender deposits', s, 'source'), legCard('Destination: the receiver is paid', d, 'destination'));
  const history = el('section', { class: 'card' }, el('h2', {}, 'Timeline'), timeline(events, order.status));
  return [head, el('div', { class: 'order-body' }, legs, history)];
}

/** @param {HTMLElement} view @param {string} id */
async function showOrder(view, id) {
  /** @type {{order: any, events: Array<{id: string, status: string, created_at: string}>}} */
  let state;
  try {
    state = await getJson(`${API}/orders/${id}`);
  } catch (err) {
    replace(view, el('h1', {}, 'Order'), el('p', { class: 'error', role: 'alert' }, err.message));
    return;
  }
  document.title = `Order ${shortId(id)} · Hashlock explorer`;
  const render = () => replace(view, ...orderView(state));
  render();
  follow(`${API}/orders/${id}/events`, (event) => {
    if (event.order_id !== id) return;
    if (!state.events.some((e) => e.id === event.id)) {
      state.events = [...state.events, { id: event.id, status: event.status, created_at: event.created_at }].sort((a, b) =>
        BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0,
      );
    }
    // The newest event carries the newest order read.
    if (state.events[state.events.length - 1].id === event.id) state.order = event.order;
    render();
  });
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const view = document.getElementById('view');
  const params = new URLSearchParams(location.search);
  const q = params.get('q')?.trim() || null;
  const input = document.getElementById('q');
  if (q && input) input.value = q;
  try {
    await loadRegistry();
  } catch (err) {
    replace(view, el('p', { class: 'error', role: 'alert' }, `The explorer could not load the chains: ${err.message}`));
    return;
  }
  const orderMatch = ORDER_PATH.exec(location.pathname);
  // A malformed id is passed on as it is (still URL-encoded): the API's answer says what is wrong.
  if (orderMatch) await showOrder(view, orderMatch[1].toLowerCase());
  else await showList(view, q, Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1));
}

// Imported elsewhere (a test reading formatUnits) there is no page to run.
if (typeof document !== 'undefined' && document.getElementById('view')) void main();
