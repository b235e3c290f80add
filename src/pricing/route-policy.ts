import type { Asset, Registry } from '../chains/registry.ts';
import { ConfigError } from '../config/schema-check.ts';
import { AppError } from '../errors.ts';

/**
 * The route policy: which asset pairs may be swapped, as Garden's `GET /v2/policy` publishes it.
 * Rules are strings `<side> -> <side>` (one way) or `<side> <-> <side>` (both ways), where a side
 * is `chain:SYMBOL`, `chain:*`, `*:SYMBOL`, `*:*` or `*`. The evaluation is the one Garden's SDK
 * (@gardenfi/orderbook RouteValidator) applies to the same document, so that a client that checks
 * routes locally and the service always agree:
 *
 * 1. Isolation (`isolation_groups`): each side of a route looks up the first isolation rule, most
 *    specific first, that names it. A source found on a rule may only go to the rule's other side;
 *    a destination found on a `<->` rule may only be reached from its other side. A `->` rule
 *    leaves its destination side free.
 * 2. Blacklist (`blacklist_pairs`): a matching rule refuses the route unless a whitelist rule
 *    (`whitelist_overrides`) matches it too. The whitelist overrides only the blacklist: it opens
 *    neither an isolated asset nor a route the default closes.
 * 3. Default: `open` allows every other route, `closed` refuses it.
 */
export type PolicyDefault = 'open' | 'closed';

/** The policy document: the service config's `route_policy`, served as is by `GET /v2/policy`. */
export interface RoutePolicyRules {
  default: PolicyDefault;
  isolation_groups: string[];
  blacklist_pairs: string[];
  whitelist_overrides: string[];
}

export const RULE_LISTS = ['isolation_groups', 'blacklist_pairs', 'whitelist_overrides'] as const;
export type RuleList = (typeof RULE_LISTS)[number];

/** One side of a route, as rules see it: a chain key and an asset symbol. */
export interface RouteEnd {
  chain: string;
  symbol: string;
}

export interface RouteDecision {
  allowed: boolean;
  /** What decided: `blacklist_pairs rule "..."`, `the default policy "closed"`, ... */
  by: string;
}

type Direction = '->' | '<->';

/** `*` for any chain or symbol; otherwise lower-cased, since matching ignores case. */
interface SidePattern {
  chain: string;
  symbol: string;
  /** 0 for a bare `*`, 1 for a side with a wildcard, 2 for one asset. */
  specificity: number;
}

interface Rule {
  text: string;
  list: RuleList;
  index: number;
  from: SidePattern;
  to: SidePattern;
  direction: Direction;
  /** Source side first: a rule naming its source exactly outranks any with a wildcard source. */
  specificity: number;
}

/** Every arrow-like token, so that `<-` or `=>` is reported as a direction we do not know. */
const ARROWS = /<->|->|<=>|=>|<-|<=|<>|→|←|↔/g;
const NAME = '[A-Za-z0-9_]+';
const SIDE = new RegExp(`^(\\*|${NAME}):(\\*|${NAME})$`);

function parseSide(text: string, rule: string, where: string, which: 'source' | 'destination'): SidePattern {
  if (text === '*') return { chain: '*', symbol: '*', specificity: 0 };
  const m = SIDE.exec(text);
  if (!m) {
    throw new ConfigError(
      `${where}: rule "${rule}": ${which} side ${JSON.stringify(text)} must be chain:SYMBOL, with * for any chain or symbol`,
    );
  }
  const [chain, symbol] = [m[1]!.toLowerCase(), m[2]!.toLowerCase()];
  return { chain, symbol, specificity: chain === '*' || symbol === '*' ? 1 : 2 };
}

/** Parses one rule string; `where` names its field (`config: route_policy.blacklist_pairs[2]`). */
export function parseRule(text: string, list: RuleList, index: number, where: string): Rule {
  const arrows = [...text.matchAll(ARROWS)];
  if (arrows.length === 0) throw new ConfigError(`${where}: rule "${text}" has no direction; write "A -> B" (one way) or "A <-> B" (both ways)`);
  if (arrows.length > 1) throw new ConfigError(`${where}: rule "${text}" has more than one direction`);
  const arrow = arrows[0]!;
  if (arrow[0] !== '->' && arrow[0] !== '<->') {
    throw new ConfigError(`${where}: rule "${text}" has an unknown direction "${arrow[0]}"; use -> (one way) or <-> (both ways)`);
  }
  const from = parseSide(text.slice(0, arrow.index).trim(), text, where, 'source');
  const to = parseSide(text.slice(arrow.index + arrow[0].length).trim(), text, where, 'destination');
  return { text, list, index, from, to, direction: arrow[0], specificity: from.specificity * 10 + to.specificity };
}

const matches = (end: RouteEnd, side: SidePattern): boolean =>
  (side.chain === '*' || side.chain === end.chain.toLowerCase()) && (side.symbol === '*' || side.symbol === end.symbol.toLowerCase());

/** Whether a rule covers the route: its way, or either way for `<->`. */
const coversRoute = (rule: Rule, from: RouteEnd, to: RouteEnd): boolean =>
  (matches(from, rule.from) && matches(to, rule.to)) || (rule.direction === '<->' && matches(from, rule.to) && matches(to, rule.from));

/** The side of a rule an asset is on, and the side it may pair with. */
interface Membership {
  rule: Rule;
  other: SidePattern;
}

/** The first isolation rule naming the asset, on its source side or, for `<->`, on either side. */
function isolationOf(end: RouteEnd, rules: readonly Rule[]): Membership | undefined {
  for (const rule of rules) {
    if (matches(end, rule.from)) return { rule, other: rule.to };
    if (rule.direction === '<->' && matches(end, rule.to)) return { rule, other: rule.from };
  }
  return undefined;
}

const bySpecificity = (rules: Rule[]): Rule[] => rules.sort((a, b) => b.specificity - a.specificity);

export class RoutePolicy {
  private readonly isolation: readonly Rule[];
  private readonly blacklist: readonly Rule[];
  private readonly whitelist: readonly Rule[];

  /**
   * Checks every rule's form, and with a registry that each names chains and symbols it has.
   * Errors name the field: `${where}.blacklist_pairs[2]: rule "...": ...`.
   */
  constructor(
    readonly rules: RoutePolicyRules,
    options: { where?: string; registry?: Registry } = {},
  ) {
    const where = options.where ?? 'route_policy';
    const parse = (list: RuleList) =>
      rules[list].map((text, i) => {
        const rule = parseRule(text, list, i, `${where}.${list}[${i}]`);
        if (options.registry) checkNamesKnown(rule, options.registry, `${where}.${list}[${i}]`);
        return rule;
      });
    this.isolation = bySpecificity(parse('isolation_groups'));
    this.blacklist = bySpecificity(parse('blacklist_pairs'));
    this.whitelist = bySpecificity(parse('whitelist_overrides'));
  }

  static open(): RoutePolicy {
    return new RoutePolicy({ default: 'open', isolation_groups: [], blacklist_pairs: [], whitelist_overrides: [] });
  }

  decide(from: RouteEnd, to: RouteEnd): RouteDecision {
    if (from.chain.toLowerCase() === to.chain.toLowerCase() && from.symbol.toLowerCase() === to.symbol.toLowerCase()) {
      return { allowed: false, by: 'the same asset on both sides' };
    }
    const source = isolationOf(from, this.isolation);
    if (source && !matches(to, source.other)) return { allowed: false, by: ruleName(source.rule) };
    const destination = isolationOf(to, this.isolation);
    if (destination && destination.rule.direction === '<->' && !matches(from, destination.other)) {
      return { allowed: false, by: ruleName(destination.rule) };
    }
    const blacklisted = this.blacklist.find((r) => coversRoute(r, from, to));
    if (blacklisted) {
      const whitelisted = this.whitelist.find((r) => coversRoute(r, from, to));
      return whitelisted ? { allowed: true, by: ruleName(whitelisted) } : { allowed: false, by: ruleName(blacklisted) };
    }
    return { allowed: this.rules.default === 'open', by: `the default policy "${this.rules.default}"` };
  }

  /** Refuses, as bad input naming the deciding rule, a route the policy forbids. */
  check(from: Asset, to: Asset): void {
    const decision = this.decide(endOf(from), endOf(to));
    if (!decision.allowed) throw new AppError('route_refused', `route ${from.id} -> ${to.id} is refused by ${decision.by}`);
  }
}

const ruleName = (rule: Rule): string => `${rule.list} rule "${rule.text}"`;

export const endOf = (asset: Asset): RouteEnd => ({ chain: asset.chain.key, symbol: asset.symbol });

/** A rule naming a chain or symbol the registry lacks is a typo that would silently never match. */
function checkNamesKnown(rule: Rule, registry: Registry, where: string): void {
  for (const side of [rule.from, rule.to]) {
    if (side.chain !== '*' && !registry.chain(side.chain)) {
      throw new ConfigError(`${where}: rule "${rule.text}" names chain ${side.chain}, which is not in the registry`);
    }
    if (side.symbol === '*') continue;
    const candidates = side.chain === '*' ? registry.assets : registry.chain(side.chain)!.assets;
    if (!candidates.some((a) => a.symbol.toLowerCase() === side.symbol)) {
      const on = side.chain === '*' ? 'any chain' : side.chain;
      throw new ConfigError(`${where}: rule "${rule.text}" names symbol ${side.symbol}, which no asset on ${on} has`);
    }
  }
}
