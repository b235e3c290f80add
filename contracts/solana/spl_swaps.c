/*
 * HTLC for SPL tokens with the interface of Garden's `solana_spl_swaps` (Anchor IDL v0.4.0): tokens
 * are escrowed in one vault per mint (PDA [mint]) whose token authority is the program-wide
 * identity PDA (seeds []); the swap's state lives in the PDA [initiator, secret_hash]; a sponsor pays
 * the rent and gets it back when the swap closes.
 *
 * One addition to Garden's SwapAccount: the mint, after the IDL's fields (bytes 153..185). Garden's
 * SwapAccount does not record the mint, so nothing else would stop a redeem or refund from paying
 * `swap_amount` out of another mint's vault. Decoders of the IDL layout read the same prefix.
 */
#include "htlc_runtime.h"

#define ERR_INVALID_REDEEMER 6000
#define ERR_INVALID_SECRET 6001
#define ERR_INVALID_SPONSOR 6002
#define ERR_REFUND_BEFORE_EXPIRY 6003

/* SwapAccount: discriminator, expiry_slot, initiator, redeemer, secret_hash, swap_amount,
 * identity_pda_bump, sponsor (the IDL's fields), then mint. */
#define SWAP_EXPIRY_SLOT 8
#define SWAP_INITIATOR 16
#define SWAP_REDEEMER 48
#define SWAP_SECRET_HASH 80
#define SWAP_AMOUNT 112
#define SWAP_IDENTITY_BUMP 120
#define SWAP_SPONSOR 121
#define SWAP_MINT 153
#define SWAP_ACCOUNT_LEN 185

/* spl_token::state::Account and Mint */
#define TOKEN_ACCOUNT_LEN 165
#define TOKEN_ACCOUNT_MINT 0
#define TOKEN_ACCOUNT_OWNER 32
#define TOKEN_ACCOUNT_STATE 108
#define MINT_LEN 82
#define MINT_IS_INITIALIZED 45

#define MAX_DESTINATION_DATA 1024

/* `Account<'info, TokenAccount>` with Anchor's `token::mint` / `token::authority` constraints. */
static u64 check_token_account(const SolAccountInfo *account, const u8 *mint, const u8 *authority, u64 authority_error) {
  if (!bytes32_equal(account->owner, &TOKEN_PROGRAM_ID)) return ERR_ACCOUNT_OWNED_BY_WRONG_PROGRAM;
  if (account->data_len != TOKEN_ACCOUNT_LEN || account->data[TOKEN_ACCOUNT_STATE] == 0) return ERR_ACCOUNT_DID_NOT_DESERIALIZE;
  if (!bytes32_equal(account->data + TOKEN_ACCOUNT_MINT, mint)) return ERR_CONSTRAINT_TOKEN_MINT;
  if (!bytes32_equal(account->data + TOKEN_ACCOUNT_OWNER, authority)) return authority_error;
  return 0;
}

static u64 find_vault(const Pubkey *program_id, const u8 *mint, Pubkey *vault, u8 *bump) {
  SolBytes seeds[1] = {{mint, 32}};
  return find_program_address(seeds, 1, program_id, vault, bump);
}

/* SPL Token InitializeAccount3 (18): the vault's mint and its owner, the identity PDA. */
static u64 initialize_vault(SolAccountInfo *vault, SolAccountInfo *mint, const Pubkey *identity) {
  u8 data[33];
  data[0] = 18;
  copy_bytes(data + 1, identity, 32);
  SolAccountMeta metas[2] = {{vault->key, 1, 0}, {mint->key, 0, 0}};
  SolAccountInfo infos[2] = {*vault, *mint};
  SolInstruction instruction = {&TOKEN_PROGRAM_ID, metas, 2, data, sizeof(data)};
  return invoke(&instruction, infos, 2, 0);
}

/* Initiated { swap_amount, expires_in_slots, initiator, mint, redeemer, secret_hash, destination_data } */
static void emit_initiated(const u8 *args, const u8 *initiator, const u8 *mint, const u8 *destination, u64 destination_len) {
  u8 event[8 + 8 + 8 + 32 * 4 + 5 + MAX_DESTINATION_DATA];
  write_u64(event, EVENT_INITIATED);
  copy_bytes(event + 8, args + 72, 8);
  copy_bytes(event + 16, args, 8);
  copy_bytes(event + 24, initiator, 32);
  copy_bytes(event + 56, mint, 32);
  copy_bytes(event + 88, args + 8, 32);
  copy_bytes(event + 120, args + 40, 32);
  copy_bytes(event + 152, destination, destination_len);
  emit_event(event, 152 + destination_len);
}

static u64 initiate(Input *in) {
  LOG("Instruction: Initiate");
  /* args: expires_in_slots u64, redeemer, secret_hash, swap_amount u64, destination_data Option<bytes> */
  if (in->data_len < 8 + 81) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  const u8 *args = in->data + 8;
  const u8 *destination = args + 80;
  u64 destination_len = 1;
  if (destination[0] == 1) {
    if (in->data_len < 8 + 85) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
    u64 len = (u64)destination[1] | ((u64)destination[2] << 8) | ((u64)destination[3] << 16) | ((u64)destination[4] << 24);
    if (len > MAX_DESTINATION_DATA) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
    destination_len = 5 + len;
  } else if (destination[0] != 0) {
    return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  }
  if (in->data_len != 8 + 80 + destination_len) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  u64 expires_in_slots = read_u64(args);
  const u8 *secret_hash = args + 40;
  u64 swap_amount = read_u64(args + 72);

  if (in->account_count < 9) return ERR_ACCOUNT_NOT_ENOUGH_KEYS;
  SolAccountInfo *identity = &in->accounts[0];
  SolAccountInfo *swap = &in->accounts[1];
  SolAccountInfo *vault = &in->accounts[2];
  SolAccountInfo *initiator = &in->accounts[3];
  SolAccountInfo *initiator_tokens = &in->accounts[4];
  SolAccountInfo *mint = &in->accounts[5];
  SolAccountInfo *sponsor = &in->accounts[6];

  u64 err;
  if ((err = require_writable(identity))) return err;
  if ((err = require_writable(swap))) return err;
  if ((err = require_writable(vault))) return err;
  if ((err = require_signer(initiator))) return err;
  if ((err = require_writable(initiator_tokens))) return err;
  if ((err = check_token_account(initiator_tokens, mint->key->x, initiator->key->x, ERR_CONSTRAINT_TOKEN_OWNER))) return err;
  if (!bytes32_equal(mint->owner, &TOKEN_PROGRAM_ID)) return ERR_ACCOUNT_OWNED_BY_WRONG_PROGRAM;
  if (mint->data_len != MINT_LEN || mint->data[MINT_IS_INITIALIZED] == 0) return ERR_ACCOUNT_DID_NOT_DESERIALIZE;
  if ((err = require_signer(sponsor))) return err;
  if ((err = require_writable(sponsor))) return err;
  if ((err = require_program(&in->accounts[7], &TOKEN_PROGRAM_ID))) return err;
  if ((err = require_program(&in->accounts[8], &SYSTEM_PROGRAM_ID))) return err;

  Pubkey expected;
  u8 identity_bump, swap_bump, vault_bump;
  SolBytes no_seeds[1] = {{0, 0}};
  if (find_program_address(no_seeds, 0, in->program_id, &expected, &identity_bump)) return ERR_CONSTRAINT_SEEDS;
  if (!bytes32_equal(&expected, identity->key)) return ERR_CONSTRAINT_SEEDS;
  SolBytes swap_seeds[3] = {{initiator->key->x, 32}, {secret_hash, 32}, {&swap_bump, 1}};
  if (find_program_address(swap_seeds, 2, in->program_id, &expected, &swap_bump)) return ERR_CONSTRAINT_SEEDS;
  if (!bytes32_equal(&expected, swap->key)) return ERR_CONSTRAINT_SEEDS;
  if (find_vault(in->program_id, mint->key->x, &expected, &vault_bump)) return ERR_CONSTRAINT_SEEDS;
  if (!bytes32_equal(&expected, vault->key)) return ERR_CONSTRAINT_SEEDS;

  u64 slot;
  if ((err = current_slot(&slot))) return err;
  u64 expiry_slot = slot + expires_in_slots;
  if (expiry_slot < slot) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;

  if (!bytes32_equal(identity->owner, in->program_id)) {
    SolBytes identity_seeds[1] = {{&identity_bump, 1}};
    SolSignerSeeds signer = {identity_seeds, 1};
    if ((err = create_pda_account(sponsor, identity, 0, in->program_id, &signer))) return err;
  }
  SolSignerSeeds swap_signer = {swap_seeds, 3};
  if ((err = create_pda_account(sponsor, swap, SWAP_ACCOUNT_LEN, in->program_id, &swap_signer))) return err;
  if (bytes32_equal(vault->owner, &TOKEN_PROGRAM_ID)) {
    if ((err = check_token_account(vault, mint->key->x, identity->key->x, ERR_CONSTRAINT_TOKEN_OWNER))) return err;
  } else {
    SolBytes vault_seeds[2] = {{mint->key->x, 32}, {&vault_bump, 1}};
    SolSignerSeeds vault_signer = {vault_seeds, 2};
    if ((err = create_pda_account(sponsor, vault, TOKEN_ACCOUNT_LEN, &TOKEN_PROGRAM_ID, &vault_signer))) return err;
    if ((err = initialize_vault(vault, mint, identity->key))) return err;
  }

  u8 *data = swap->data;
  write_u64(data, ACCOUNT_SWAP_ACCOUNT);
  write_u64(data + SWAP_EXPIRY_SLOT, expiry_slot);
  copy_bytes(data + SWAP_INITIATOR, initiator->key, 32);
  copy_bytes(data + SWAP_REDEEMER, args + 8, 32);
  copy_bytes(data + SWAP_SECRET_HASH, secret_hash, 32);
  write_u64(data + SWAP_AMOUNT, swap_amount);
  data[SWAP_IDENTITY_BUMP] = identity_bump;
  copy_bytes(data + SWAP_SPONSOR, sponsor->key, 32);
  copy_bytes(data + SWAP_MINT, mint->key, 32);

  if ((err = token_transfer(initiator_tokens, vault, initiator, swap_amount, 0))) return err;
  emit_initiated(args, initiator->key->x, mint->key->x, destination, destination_len);
  return 0;
}

/* The accounts every closing instruction shares: identity PDA, swap, vault, sponsor, token program. */
typedef struct {
  SolAccountInfo *identity;
  SolAccountInfo *swap;
  SolAccountInfo *vault;
  SolAccountInfo *sponsor;
} Closing;

static u64 load_closing(Input *in, u64 account_count, u64 sponsor_index, Closing *c) {
  if (in->account_count < account_count) return ERR_ACCOUNT_NOT_ENOUGH_KEYS;
  c->identity = &in->accounts[0];
  c->swap = &in->accounts[1];
  c->vault = &in->accounts[2];
  c->sponsor = &in->accounts[sponsor_index];
  u64 err;
  if ((err = require_writable(c->swap))) return err;
  if ((err = require_swap_account(c->swap, in->program_id, SWAP_ACCOUNT_LEN))) return err;
  const u8 *swap = c->swap->data;

  SolBytes identity_seeds[1] = {{swap + SWAP_IDENTITY_BUMP, 1}};
  Pubkey expected;
  if (sol_create_program_address(identity_seeds, 1, in->program_id, &expected)) return ERR_CONSTRAINT_SEEDS;
  if (!bytes32_equal(&expected, c->identity->key)) return ERR_CONSTRAINT_SEEDS;

  if ((err = require_writable(c->vault))) return err;
  if ((err = check_token_account(c->vault, swap + SWAP_MINT, c->identity->key->x, ERR_CONSTRAINT_TOKEN_OWNER))) return err;
  u8 vault_bump;
  if (find_vault(in->program_id, swap + SWAP_MINT, &expected, &vault_bump)) return ERR_CONSTRAINT_SEEDS;
  if (!bytes32_equal(&expected, c->vault->key)) return ERR_CONSTRAINT_SEEDS;

  if ((err = require_writable(c->sponsor))) return err;
  if (!bytes32_equal(c->sponsor->key, swap + SWAP_SPONSOR)) return ERR_INVALID_SPONSOR;
  return require_program(&in->accounts[account_count - 1], &TOKEN_PROGRAM_ID);
}

/* The token account the escrow goes to: writable, of the swap's mint, owned by `owner`, not the vault. */
static u64 check_recipient(const Closing *c, const SolAccountInfo *recipient, const u8 *owner, u64 owner_error) {
  u64 err;
  if ((err = require_writable(recipient))) return err;
  if ((err = check_token_account(recipient, c->swap->data + SWAP_MINT, owner, owner_error))) return err;
  if (bytes32_equal(recipient->key, c->vault->key)) return owner_error;
  return 0;
}

/* Pays the escrow from the vault (signed by the identity PDA), closes the swap to the sponsor, emits the event. */
static u64 settle(Closing *c, SolAccountInfo *recipient, u64 event_discriminator, const u8 *secret_or_hash) {
  u8 bump = c->swap->data[SWAP_IDENTITY_BUMP];
  SolBytes identity_seeds[1] = {{&bump, 1}};
  SolSignerSeeds signer = {identity_seeds, 1};
  u64 err = token_transfer(c->vault, recipient, c->identity, read_u64(c->swap->data + SWAP_AMOUNT), &signer);
  if (err) return err;
  u8 event[8 + 32 + 32];
  write_u64(event, event_discriminator);
  copy_bytes(event + 8, c->swap->data + SWAP_INITIATOR, 32);
  copy_bytes(event + 40, secret_or_hash, 32);
  close_account(c->swap, c->sponsor);
  emit_event(event, sizeof(event));
  return 0;
}

static u64 redeem(Input *in) {
  LOG("Instruction: Redeem");
  if (in->data_len != 8 + 32) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  Closing c;
  u64 err = load_closing(in, 6, 4, &c);
  if (err) return err;
  SolAccountInfo *redeemer_tokens = &in->accounts[3];
  if ((err = check_recipient(&c, redeemer_tokens, c.swap->data + SWAP_REDEEMER, ERR_INVALID_REDEEMER))) return err;
  const u8 *secret = in->data + 8;
  if (!secret_matches(secret, c.swap->data + SWAP_SECRET_HASH)) return ERR_INVALID_SECRET;
  return settle(&c, redeemer_tokens, EVENT_REDEEMED, secret);
}

static u64 refund(Input *in) {
  LOG("Instruction: Refund");
  if (in->data_len != 8) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  Closing c;
  u64 err = load_closing(in, 6, 4, &c);
  if (err) return err;
  SolAccountInfo *initiator_tokens = &in->accounts[3];
  if ((err = check_recipient(&c, initiator_tokens, c.swap->data + SWAP_INITIATOR, ERR_CONSTRAINT_TOKEN_OWNER))) return err;
  u64 slot;
  if ((err = current_slot(&slot))) return err;
  if (slot <= read_u64(c.swap->data + SWAP_EXPIRY_SLOT)) return ERR_REFUND_BEFORE_EXPIRY;
  u8 secret_hash[32];
  copy_bytes(secret_hash, c.swap->data + SWAP_SECRET_HASH, 32);
  return settle(&c, initiator_tokens, EVENT_REFUNDED, secret_hash);
}

static u64 instant_refund(Input *in) {
  LOG("Instruction: InstantRefund");
  if (in->data_len != 8) return ERR_INSTRUCTION_DID_NOT_DESERIALIZE;
  Closing c;
  u64 err = load_closing(in, 7, 5, &c);
  if (err) return err;
  SolAccountInfo *initiator_tokens = &in->accounts[3];
  SolAccountInfo *redeemer = &in->accounts[4];
  if ((err = check_recipient(&c, initiator_tokens, c.swap->data + SWAP_INITIATOR, ERR_CONSTRAINT_TOKEN_OWNER))) return err;
  if ((err = require_signer(redeemer))) return err;
  if ((err = require_writable(redeemer))) return err;
  if (!bytes32_equal(redeemer->key, c.swap->data + SWAP_REDEEMER)) return ERR_INVALID_REDEEMER;
  u8 secret_hash[32];
  copy_bytes(secret_hash, c.swap->data + SWAP_SECRET_HASH, 32);
  return settle(&c, initiator_tokens, EVENT_INSTANT_REFUNDED, secret_hash);
}

u64 entrypoint(const u8 *raw) {
  Input in;
  parse_input(raw, &in);
  if (in.data_len < 8) return ERR_INSTRUCTION_MISSING;
  u64 discriminator = read_u64(in.data);
  if (discriminator == IX_INITIATE) return initiate(&in);
  if (discriminator == IX_REDEEM) return redeem(&in);
  if (discriminator == IX_REFUND) return refund(&in);
  if (discriminator == IX_INSTANT_REFUND) return instant_refund(&in);
  return ERR_INSTRUCTION_FALLBACK_NOT_FOUND;
}
