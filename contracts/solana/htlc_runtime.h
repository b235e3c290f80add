/*
 * The runtime pieces both HTLC programs share: the SBPFv0 entrypoint input, syscalls, PDA-signed CPI
 * to the System and Token programs, Anchor-compatible discriminators and error codes, Borsh reads and
 * `emit!`-style events. Everything is `static`: each program is one translation unit, and SBPFv0 has
 * no writable globals, so all state lives on the stack or in account data.
 */
#ifndef HTLC_RUNTIME_H
#define HTLC_RUNTIME_H

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;

typedef struct {
  u8 x[32];
} Pubkey;

/* The C ABI of the runtime (sol_invoke_signed_c, sol_log_data, sol_sha256, PDA syscalls). */
typedef struct {
  const u8 *addr;
  u64 len;
} SolBytes;

typedef struct {
  const SolBytes *addr;
  u64 len;
} SolSignerSeeds;

typedef struct {
  Pubkey *key;
  u64 *lamports;
  u64 data_len;
  u8 *data;
  Pubkey *owner;
  u64 rent_epoch;
  u8 is_signer;
  u8 is_writable;
  u8 executable;
} SolAccountInfo;

typedef struct {
  const Pubkey *pubkey;
  u8 is_writable;
  u8 is_signer;
} SolAccountMeta;

typedef struct {
  const Pubkey *program_id;
  const SolAccountMeta *accounts;
  u64 account_len;
  const u8 *data;
  u64 data_len;
} SolInstruction;

extern void sol_log_(const char *message, u64 len);
extern void sol_log_data(const SolBytes *fields, u64 count);
extern u64 sol_sha256(const SolBytes *values, u64 count, u8 *result);
extern u64 sol_create_program_address(const SolBytes *seeds, u64 count, const Pubkey *program, Pubkey *out);
extern u64 sol_try_find_program_address(const SolBytes *seeds, u64 count, const Pubkey *program, Pubkey *out, u8 *bump);
extern u64 sol_get_clock_sysvar(void *clock);
extern u64 sol_get_rent_sysvar(void *rent);
extern void sol_memcpy_(void *dst, const void *src, u64 n);
extern void sol_memset_(void *dst, u8 value, u64 n);
extern void sol_memcmp_(const void *a, const void *b, u64 n, int *result);
extern u64 sol_invoke_signed_c(const SolInstruction *instruction, const SolAccountInfo *infos, u64 info_count,
                               const SolSignerSeeds *signers, u64 signer_count);

/* ---- Anchor framework error codes (anchor_lang::error::ErrorCode) ---- */
#define ERR_INSTRUCTION_MISSING 100
#define ERR_INSTRUCTION_FALLBACK_NOT_FOUND 101
#define ERR_INSTRUCTION_DID_NOT_DESERIALIZE 102
#define ERR_CONSTRAINT_MUT 2000
#define ERR_CONSTRAINT_SEEDS 2006
#define ERR_CONSTRAINT_TOKEN_MINT 2014
#define ERR_CONSTRAINT_TOKEN_OWNER 2015
#define ERR_ACCOUNT_DISCRIMINATOR_NOT_FOUND 3001
#define ERR_ACCOUNT_DISCRIMINATOR_MISMATCH 3002
#define ERR_ACCOUNT_DID_NOT_DESERIALIZE 3003
#define ERR_ACCOUNT_NOT_ENOUGH_KEYS 3005
#define ERR_ACCOUNT_OWNED_BY_WRONG_PROGRAM 3007
#define ERR_INVALID_PROGRAM_ID 3008
#define ERR_ACCOUNT_NOT_SIGNER 3010
#define ERR_ACCOUNT_NOT_INITIALIZED 3012
/* Not an Anchor code: the rent sysvar holds a threshold this program cannot apply exactly. */
#define ERR_UNSUPPORTED_RENT 7000

/* Anchor discriminators as little-endian u64: sha256("global:<ix>" | "account:<Name>" | "event:<Name>")[0..8]. */
#define IX_INITIATE 0x0e944b99717b3f05ULL
#define IX_REDEEM 0xe161c44695560cb8ULL
#define IX_REFUND 0x2e2ed03ffbb76002ULL
#define IX_INSTANT_REFUND 0xfb3b93b72967cad3ULL
#define ACCOUNT_SWAP_ACCOUNT 0xb669c50e0e097e35ULL
#define EVENT_INITIATED 0xddcf3c435bd46c06ULL
#define EVENT_REDEEMED 0x266ba51f47b71d0eULL
#define EVENT_REFUNDED 0x63dd7bc4f6956723ULL
#define EVENT_INSTANT_REFUNDED 0x19dae8b7cf1232dcULL

#define MAX_ACCOUNTS 12
#define MAX_PERMITTED_DATA_INCREASE 10240

/* ---- bytes ---- */
static u64 read_u64(const u8 *p) {
  u64 v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static void write_u64(u8 *p, u64 v) {
  for (int i = 0; i < 8; i++) p[i] = (u8)(v >> (8 * i));
}

/* The memory syscalls cost 10 compute units for up to 2.5 KB, far less than a byte loop. */
static void copy_bytes(void *dst, const void *src, u64 n) { sol_memcpy_(dst, src, n); }

static void zero_bytes(void *dst, u64 n) { sol_memset_(dst, 0, n); }

static int bytes32_equal(const void *a, const void *b) {
  int result = 1;
  sol_memcmp_(a, b, 32, &result);
  return result == 0;
}

#define LOG(literal) sol_log_(literal, sizeof(literal) - 1)

/* ---- well-known programs ---- */
static const Pubkey SYSTEM_PROGRAM_ID = {{0}};
static const Pubkey TOKEN_PROGRAM_ID = {{0x06, 0xdd, 0xf6, 0xe1, 0xd7, 0x65, 0xa1, 0x93, 0xd9, 0xcb, 0xe1,
                                         0x46, 0xce, 0xeb, 0x79, 0xac, 0x1c, 0xb4, 0x85, 0xed, 0x5f, 0x5b,
                                         0x37, 0x91, 0x3a, 0x8c, 0xf5, 0x85, 0x7e, 0xff, 0x00, 0xa9}};

/* ---- the entrypoint input (aligned serialization of the upgradeable loader) ---- */
typedef struct {
  SolAccountInfo accounts[MAX_ACCOUNTS];
  u64 account_count;
  const u8 *data;
  u64 data_len;
  const Pubkey *program_id;
} Input;

/*
 * Reads the accounts, instruction data and program id. Accounts past MAX_ACCOUNTS are skipped (as
 * Anchor ignores remaining accounts). A duplicate entry copies the first entry's pointers, so writes
 * through either name land in the one serialized account.
 */
static void parse_input(const u8 *cursor, Input *input) {
  u64 count = read_u64(cursor);
  cursor += 8;
  input->account_count = count < MAX_ACCOUNTS ? count : MAX_ACCOUNTS;
  for (u64 i = 0; i < count; i++) {
    u8 duplicate_of = cursor[0];
    if (duplicate_of != 0xff) {
      if (i < MAX_ACCOUNTS) input->accounts[i] = input->accounts[duplicate_of];
      cursor += 8;
      continue;
    }
    SolAccountInfo info;
    info.is_signer = cursor[1];
    info.is_writable = cursor[2];
    info.executable = cursor[3];
    cursor += 8;
    info.key = (Pubkey *)cursor;
    cursor += 32;
    info.owner = (Pubkey *)cursor;
    cursor += 32;
    info.lamports = (u64 *)cursor;
    cursor += 8;
    info.data_len = read_u64(cursor);
    cursor += 8;
    info.data = (u8 *)cursor;
    cursor += info.data_len + MAX_PERMITTED_DATA_INCREASE;
    cursor = (const u8 *)(((u64)cursor + 7) & ~7ULL);
    info.rent_epoch = read_u64(cursor);
    cursor += 8;
    if (i < MAX_ACCOUNTS) input->accounts[i] = info;
  }
  input->data_len = read_u64(cursor);
  cursor += 8;
  input->data = cursor;
  cursor += input->data_len;
  input->program_id = (const Pubkey *)cursor;
}

/* The serialized data length sits just before the data; CPIs and reallocs change it there. */
static void refresh_data_len(SolAccountInfo *account) { account->data_len = read_u64(account->data - 8); }

static void set_data_len(SolAccountInfo *account, u64 len) {
  write_u64(account->data - 8, len);
  account->data_len = len;
}

/* ---- Anchor-style account checks ---- */
static u64 require_signer(const SolAccountInfo *account) { return account->is_signer ? 0 : ERR_ACCOUNT_NOT_SIGNER; }

static u64 require_writable(const SolAccountInfo *account) { return account->is_writable ? 0 : ERR_CONSTRAINT_MUT; }

static u64 require_program(const SolAccountInfo *account, const Pubkey *id) {
  return bytes32_equal(account->key, id) ? 0 : ERR_INVALID_PROGRAM_ID;
}

/* `Account<'info, SwapAccount>`: initialized, owned by this program, carrying the discriminator. */
static u64 require_swap_account(const SolAccountInfo *account, const Pubkey *program_id, u64 layout_len) {
  if (bytes32_equal(account->owner, &SYSTEM_PROGRAM_ID) && *account->lamports == 0) return ERR_ACCOUNT_NOT_INITIALIZED;
  if (!bytes32_equal(account->owner, program_id)) return ERR_ACCOUNT_OWNED_BY_WRONG_PROGRAM;
  if (account->data_len < 8) return ERR_ACCOUNT_DISCRIMINATOR_NOT_FOUND;
  if (read_u64(account->data) != ACCOUNT_SWAP_ACCOUNT) return ERR_ACCOUNT_DISCRIMINATOR_MISMATCH;
  if (account->data_len < layout_len) return ERR_ACCOUNT_DID_NOT_DESERIALIZE;
  return 0;
}

/* ---- sysvars ---- */
static u64 current_slot(u64 *slot) {
  u64 clock[5];
  u64 err = sol_get_clock_sysvar(clock);
  if (err) return err;
  *slot = clock[0];
  return 0;
}

/*
 * Rent::minimum_balance without floating point: (128 + len) * lamports_per_byte_year * threshold, where
 * the threshold (an f64) must be a whole number, as it is on every cluster (2.0, or 1.0 after SIMD-0194).
 */
static u64 rent_exempt_minimum(u64 data_len, u64 *minimum) {
  u64 rent[3];
  u64 err = sol_get_rent_sysvar(rent);
  if (err) return err;
  u64 bits = rent[1];
  if (bits >> 63) return ERR_UNSUPPORTED_RENT;
  long exponent = (long)((bits >> 52) & 0x7ff) - 1023;
  u64 mantissa = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
  if (exponent < 0 || exponent > 52) return ERR_UNSUPPORTED_RENT;
  u64 fraction_bits = 52 - (u64)exponent;
  if (mantissa & ((1ULL << fraction_bits) - 1)) return ERR_UNSUPPORTED_RENT;
  *minimum = (128 + data_len) * rent[0] * (mantissa >> fraction_bits);
  return 0;
}

/* ---- PDAs ---- */
static u64 find_program_address(const SolBytes *seeds, u64 count, const Pubkey *program, Pubkey *out, u8 *bump) {
  return sol_try_find_program_address(seeds, count, program, out, bump);
}

/* ---- CPI (BPF passes at most five arguments in registers, hence the instruction structs) ---- */
static u64 invoke(const SolInstruction *instruction, const SolAccountInfo *infos, u64 info_count, const SolSignerSeeds *signer) {
  return sol_invoke_signed_c(instruction, infos, info_count, signer, signer ? 1 : 0);
}

static u64 system_transfer(SolAccountInfo *from, SolAccountInfo *to, u64 lamports) {
  u8 data[12];
  write_u64(data, 2); /* u32 index 2, the upper half of this u64 is overwritten below */
  write_u64(data + 4, lamports);
  SolAccountMeta metas[2] = {{from->key, 1, 1}, {to->key, 1, 0}};
  SolAccountInfo infos[2] = {*from, *to};
  SolInstruction instruction = {&SYSTEM_PROGRAM_ID, metas, 2, data, sizeof(data)};
  return invoke(&instruction, infos, 2, 0);
}

/*
 * Anchor's `init`: a new account at a PDA, paid by `payer`, signed with the PDA's seeds. When someone
 * already sent lamports to the address, CreateAccount would fail, so top up, Allocate and Assign
 * instead; an address already in use fails in the System program either way.
 */
static u64 create_pda_account(SolAccountInfo *payer, SolAccountInfo *target, u64 space, const Pubkey *owner,
                              const SolSignerSeeds *signer) {
  u64 minimum = 0;
  u64 err = rent_exempt_minimum(space, &minimum);
  if (err) return err;
  SolAccountInfo infos[2] = {*payer, *target};
  if (*target->lamports == 0) {
    u8 data[52];
    zero_bytes(data, sizeof(data));
    data[0] = 0; /* CreateAccount */
    write_u64(data + 4, minimum);
    write_u64(data + 12, space);
    copy_bytes(data + 20, owner, 32);
    SolAccountMeta metas[2] = {{payer->key, 1, 1}, {target->key, 1, 1}};
    SolInstruction instruction = {&SYSTEM_PROGRAM_ID, metas, 2, data, sizeof(data)};
    err = invoke(&instruction, infos, 2, signer);
  } else {
    if (*target->lamports < minimum) {
      err = system_transfer(payer, target, minimum - *target->lamports);
      if (err) return err;
    }
    u8 allocate[12];
    write_u64(allocate, 8); /* Allocate */
    write_u64(allocate + 4, space);
    SolAccountMeta one[1] = {{target->key, 1, 1}};
    SolInstruction allocate_instruction = {&SYSTEM_PROGRAM_ID, one, 1, allocate, sizeof(allocate)};
    err = invoke(&allocate_instruction, infos + 1, 1, signer);
    if (err) return err;
    u8 assign[36];
    zero_bytes(assign, 4);
    assign[0] = 1; /* Assign */
    copy_bytes(assign + 4, owner, 32);
    SolInstruction assign_instruction = {&SYSTEM_PROGRAM_ID, one, 1, assign, sizeof(assign)};
    err = invoke(&assign_instruction, infos + 1, 1, signer);
  }
  if (err) return err;
  refresh_data_len(target);
  return 0;
}

/* SPL Token `Transfer` (instruction 3), the authority signing with `signer` seeds when it is a PDA. */
static __attribute__((unused)) u64 token_transfer(SolAccountInfo *source, SolAccountInfo *destination, SolAccountInfo *authority, u64 amount,
                          const SolSignerSeeds *signer) {
  u8 data[9];
  data[0] = 3;
  write_u64(data + 1, amount);
  SolAccountMeta metas[3] = {{source->key, 1, 0}, {destination->key, 1, 0}, {authority->key, 0, 1}};
  SolAccountInfo infos[3] = {*source, *destination, *authority};
  SolInstruction instruction = {&TOKEN_PROGRAM_ID, metas, 3, data, sizeof(data)};
  return invoke(&instruction, infos, 3, signer);
}

/* ---- closing (Anchor's `close = destination`) ---- */
static void close_account(SolAccountInfo *account, SolAccountInfo *destination) {
  u64 lamports = *account->lamports;
  *account->lamports = 0;
  *destination->lamports += lamports;
  zero_bytes(account->data, account->data_len);
  set_data_len(account, 0);
  zero_bytes(account->owner, 32);
}

/* ---- events: Anchor's emit!, one sol_log_data field of discriminator ‖ Borsh fields ---- */
static void emit_event(const u8 *bytes, u64 len) {
  SolBytes field = {bytes, len};
  sol_log_data(&field, 1);
}

/* sha256(secret) == secret_hash */
static int secret_matches(const u8 *secret, const u8 *secret_hash) {
  u8 digest[32];
  SolBytes value = {secret, 32};
  sol_sha256(&value, 1, digest);
  return bytes32_equal(digest, secret_hash);
}

#endif
