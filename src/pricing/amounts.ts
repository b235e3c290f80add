/** `50000n, 8` -> `"0.00050000"`: every decimal of the asset, as the API's `display` fields show. */
export function toDisplay(amount: bigint, decimals: number): string {
  const negative = amount < 0n;
  const digits = (negative ? -amount : amount).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals);
  return `${negative ? '-' : ''}${whole}${decimals > 0 ? `.${fraction}` : ''}`;
}

const PRICE_SCALE = 1_000_000n;

/**
 * USD value of `amount` base units at `usdPrice` per whole unit, rounded half up to cents. The price
 * is taken to micro-dollars, so the amount never passes through a float.
 */
export function toUsd(amount: bigint, decimals: number, usdPrice: number): string {
  if (!Number.isFinite(usdPrice) || usdPrice <= 0 || amount <= 0n) return '0.00';
  const micros = BigInt(Math.round(usdPrice * Number(PRICE_SCALE)));
  const cents = (amount * micros * 100n * 2n + 10n ** BigInt(decimals) * PRICE_SCALE) / (10n ** BigInt(decimals) * PRICE_SCALE * 2n);
  return toDisplay(cents, 2);
}
