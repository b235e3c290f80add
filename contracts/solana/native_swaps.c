/*
 * HTLC for native SOL with the interface of Garden's `solana_native_swaps` (Anchor IDL v0.3.0):
 * the lamports are escrowed in the swap account itself, a PDA ["swap_account", initiator, secret_hash].
 */
#include "htlc_runtime.h"

#define ERR_INVALID_INITIATOR 6000
#define ERR_INVALID_REDEEMER 6001
#define ERR_INVALID_SECRET 6002
#define ERR_REFUND_BEFORE_EXPIRY 6003

/* SwapAccount: discriminator, amount_lamports u64, expiry_slot u64, initiator, redeemer, secret_hash. */
#define SWAP_AMOUNT 8
#define SWAP_EXPIRY_SLOT 16
#define SWAP_INITIATOR 24
#define SWAP_REDEEMER 56
#define SWAP_SECRET_HASH 88
#define SWAP_ACCOUNT_LEN 120

static const char SWAP_ACCOUNT_SEED[] = "swap_account";

static u64 initiate(Input *in) {
  LOG("Instruction: Initiate");
  if (in->data_len != 8 + 8 + 8 + 32 + 32) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  if (in->account_count < 3) return ERR_ACCOUNT_NOT_ENOUGH_KEYS;
  SolAccountInfo *swap = &in->accounts[0];
  SolAccountInfo *initiator = &in->accounts[1];
  const u8 *args = in->data + 8;
  u64 amount = read_u64(args);
  u64 expires_in_slots = read_u64(args + 8);
  const u8 *redeemer = args + 16;
  const u8 *secret_hash = args + 48;

  u64 err;
  if ((err = require_writable(swap))) return err;
  if ((err = require_signer(initiator))) return err;
  if ((err = require_writable(initiator))) return err;
  if ((err = require_program(&in->accounts[2], &SYSTEM_PROGRAM_ID))) return err;

  SolBytes seeds[4] = {{(const u8 *)SWAP_ACCOUNT_SEED, sizeof(SWAP_ACCOUNT_SEED) - 1},
                       {initiator->key->x, 32},
                       {secret_hash, 32},
                       {0, 1}};
  Pubkey expected;
  u8 bump;
  if (find_program_address(seeds, 3, in->program_id, &expected, &bump)) return ERR_CONSTRAINT_SEEDS;
  if (!bytes32_equal(&expected, swap->key)) return ERR_CONSTRAINT_SEEDS;
  seeds[3].addr = &bump;
  SolSignerSeeds signer = {seeds, 4};

  u64 slot;
  if ((err = current_slot(&slot))) return err;
  u64 expiry_slot = slot + expires_in_slots;
  if (expiry_slot < slot) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;

  if ((err = create_pda_account(initiator, swap, SWAP_ACCOUNT_LEN, in->program_id, &signer))) return err;
  if ((err = system_transfer(initiator, swap, amount))) return err;

  u8 *data = swap->data;
  write_u64(data, ACCOUNT_SWAP_ACCOUNT);
  write_u64(data + SWAP_AMOUNT, amount);
  write_u64(data + SWAP_EXPIRY_SLOT, expiry_slot);
  copy_bytes(data + SWAP_INITIATOR, initiator->key, 32);
  copy_bytes(data + SWAP_REDEEMER, redeemer, 32);
  copy_bytes(data + SWAP_SECRET_HASH, secret_hash, 32);

  u8 event[8 + 8 + 8 + 32 + 32 + 32];
  write_u64(event, EVENT_INITIATED);
  write_u64(event + 8, amount);
  write_u64(event + 16, expires_in_slots);
  copy_bytes(event + 24, initiator->key, 32);
  copy_bytes(event + 56, redeemer, 32);
  copy_bytes(event + 88, secret_hash, 32);
  emit_event(event, sizeof(event));
  return 0;
}

/* The swap account and the initiator every closing instruction takes first. */
static u64 load_swap(Input *in, u64 account_count, SolAccountInfo **swap, SolAccountInfo **initiator) {
  if (in->account_count < account_count) return ERR_ACCOUNT_NOT_ENOUGH_KEYS;
  *swap = &in->accounts[0];
  *initiator = &in->accounts[1];
  u64 err;
  if ((err = require_writable(*swap))) return err;
  if ((err = require_swap_account(*swap, in->program_id, SWAP_ACCOUNT_LEN))) return err;
  if ((err = require_writable(*initiator))) return err;
  if (!bytes32_equal((*initiator)->key, (*swap)->data + SWAP_INITIATOR)) return ERR_INVALID_INITIATOR;
  return 0;
}

/* Pays the escrowed amount to `recipient`, then closes the swap account with its rent to the initiator. */
static void settle(SolAccountInfo *swap, SolAccountInfo *recipient, SolAccountInfo *initiator) {
  u64 amount = read_u64(swap->data + SWAP_AMOUNT);
  *swap->lamports -= amount;
  *recipient->lamports += amount;
  close_account(swap, initiator);
}

static void emit_closing_event(u64 discriminator, const u8 *initiator, const u8 *hash_or_secret) {
  u8 event[8 + 32 + 32];
  write_u64(event, discriminator);
  copy_bytes(event + 8, initiator, 32);
  copy_bytes(event + 40, hash_or_secret, 32);
  emit_event(event, sizeof(event));
}

static u64 redeem(Input *in) {
  LOG("Instruction: Redeem");
  if (in->data_len != 8 + 32) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  SolAccountInfo *swap, *initiator;
  u64 err = load_swap(in, 3, &swap, &initiator);
  if (err) return err;
  SolAccountInfo *redeemer = &in->accounts[2];
  if ((err = require_writable(redeemer))) return err;
  if (!bytes32_equal(redeemer->key, swap->data + SWAP_REDEEMER)) return ERR_INVALID_REDEEMER;
  const u8 *secret = in->data + 8;
  if (!secret_matches(secret, swap->data + SWAP_SECRET_HASH)) return ERR_INVALID_SECRET;

  u8 swap_initiator[32];
  copy_bytes(swap_initiator, swap->data + SWAP_INITIATOR, 32);
  settle(swap, redeemer, initiator);
  emit_closing_event(EVENT_REDEEMED, swap_initiator, secret);
  return 0;
}

static u64 refund(Input *in) {
  LOG("Instruction: Refund");
  if (in->data_len != 8) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  SolAccountInfo *swap, *initiator;
  u64 err = load_swap(in, 2, &swap, &initiator);
  if (err) return err;
  u64 slot;
  if ((err = current_slot(&slot))) return err;
  if (slot <= read_u64(swap->data + SWAP_EXPIRY_SLOT)) return ERR_REFUND_BEFORE_EXPIRY;

  u8 closing[64];
  copy_bytes(closing, swap->data + SWAP_INITIATOR, 32);
  copy_bytes(closing + 32, swap->data + SWAP_SECRET_HASH, 32);
  settle(swap, initiator, initiator);
  emit_closing_event(EVENT_REFUNDED, closing, closing + 32);
  return 0;
}

static u64 instant_refund(Input *in) {
  LOG("Instruction: InstantRefund");
  if (in->data_len != 8) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  SolAccountInfo *swap, *initiator;
  u64 err = load_swap(in, 3, &swap, &initiator);
  if (err) return err;
  SolAccountInfo *redeemer = &in->accounts[2];
  if ((err = require_signer(redeemer))) return err;
  if (!bytes32_equal(redeemer->key, swap->data + SWAP_REDEEMER)) return ERR_INVALID_REDEEMER;

  u8 closing[64];
  copy_bytes(closing, swap->data + SWAP_INITIATOR, 32);
  copy_bytes(closing + 32, swap->data + SWAP_SECRET_HASH, 32);
  settle(swap, initiator, initiator);
  emit_closing_event(EVENT_INSTANT_REFUNDED, closing, closing + 32);
  return 0;
}

u64 entrypoint(const u8 *raw) {
  Input in;
  parse_input(raw, &in);
  if (in.data_len < 8) return ERR_INSTRUCTION_MISSING;
  u64 discriminator = read_u64(in.data);
  u64 err;
  if (discriminator == IX_INITIATE) err = initiate(&in);
  else if (discriminator == IX_REDEEM) err = redeem(&in);
  else if (discriminator == IX_REFUND) err = refund(&in);
  else if (discriminator == IX_INSTANT_REFUND) err = instant_refund(&in);
  else err = ERR_INSTRUCTION_FALLBACK_NOT_FOUND;
  return err;
}
