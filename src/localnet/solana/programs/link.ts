/**
 * A linker for Solana programs: clang-19's relocatable BPF objects in, one SBPFv0 shared object out,
 * laid out as the v0 linker script lays it out (the loader's strict ELF rules accept nothing else):
 *
 *   ELF header, 4 program headers, .text (at 0x120), .rodata, .dynamic, .dynsym, .dynstr, .rel.dyn,
 *   .shstrtab, .symtab, .strtab, section headers; every allocated section has sh_addr == sh_offset.
 *
 * v0 maps the file at 0x1_0000_0000, so data addresses (lddw immediates, pointer tables) are final at
 * link time. Calls to functions of the program become PC-relative immediates (the loader registers
 * them); calls to undefined names must be syscalls: immediate -1 plus a .dynsym/.rel.dyn entry, into
 * which the loader writes the syscall's hash. Anything else is refused with the reason, never guessed.
 */
import {
  ElfFile,
  EM_BPF,
  ET_DYN,
  ET_REL,
  SHF_ALLOC,
  SHF_EXECINSTR,
  SHF_WRITE,
  SHN_ABS,
  SHN_COMMON,
  SHN_UNDEF,
  SHT_DYNAMIC,
  SHT_DYNSYM,
  SHT_NOBITS,
  SHT_PROGBITS,
  SHT_REL,
  SHT_RELA,
  SHT_STRTAB,
  SHT_SYMTAB,
  STB_GLOBAL,
  STB_LOCAL,
  STT_FUNC,
  STT_NOTYPE,
  STT_SECTION,
  PT_DYNAMIC,
  PT_LOAD,
  type SectionHeader,
} from './elf.ts';

export const R_BPF_64_64 = 1;
export const R_BPF_64_ABS64 = 2;
export const R_BPF_64_32 = 10;

/** Where SBPFv0 maps the program image. */
export const MM_PROGRAM_START = 0x1_0000_0000n;
export const TEXT_OFFSET = 0x120;

/** Syscalls the runtime registers (agave's `create_program_runtime_environment`). */
export const KNOWN_SYSCALLS: ReadonlySet<string> = new Set([
  'abort',
  'sol_panic_',
  'sol_log_',
  'sol_log_64_',
  'sol_log_compute_units_',
  'sol_log_pubkey',
  'sol_log_data',
  'sol_create_program_address',
  'sol_try_find_program_address',
  'sol_sha256',
  'sol_keccak256',
  'sol_blake3',
  'sol_secp256k1_recover',
  'sol_get_clock_sysvar',
  'sol_get_epoch_schedule_sysvar',
  'sol_get_fees_sysvar',
  'sol_get_rent_sysvar',
  'sol_get_epoch_rewards_sysvar',
  'sol_get_last_restart_slot',
  'sol_get_sysvar',
  'sol_get_epoch_stake',
  'sol_memcpy_',
  'sol_memmove_',
  'sol_memcmp_',
  'sol_memset_',
  'sol_invoke_signed_c',
  'sol_invoke_signed_rust',
  'sol_set_return_data',
  'sol_get_return_data',
  'sol_get_stack_height',
  'sol_get_processed_sibling_instruction',
  'sol_remaining_compute_units',
  'sol_curve_validate_point',
  'sol_curve_group_op',
  'sol_curve_multiscalar_mul',
  'sol_alt_bn128_group_op',
  'sol_alt_bn128_compression',
  'sol_poseidon',
  'sol_big_mod_exp',
]);

export interface ObjectFile {
  name: string;
  bytes: Uint8Array;
}

export interface LinkOptions {
  /** The entry function; `entrypoint` by default. */
  entry?: string;
}

const INSN = 8;
const OP_LDDW = 0x18;
const OP_CALL = 0x85;
const OP_CALLX = 0x8d;
const CLASS_ALU32 = 0x04;
const CLASS_JMP32 = 0x06;
const CLASS_LDX = 0x01;
const MODE_MEMSX = 0x80;

interface Placed {
  object: ElfFile;
  section: SectionHeader;
  /** Final address (= file offset) of the section's first byte. */
  address: number;
  kind: 'text' | 'rodata';
}

interface ResolvedSymbol {
  address: number;
  type: number;
}

const align = (n: number, to: number): number => Math.ceil(n / to) * to;

function isRodataName(name: string): boolean {
  return name === '.rodata' || name.startsWith('.rodata.') || name === '.data.rel.ro' || name.startsWith('.data.rel.ro.');
}

function isTextName(name: string): boolean {
  return name === '.text' || name.startsWith('.text.');
}

/** Links relocatable BPF objects (clang-19, -mcpu=v1/v2) into an SBPFv0 shared object. */
export function linkSbpfV0(objects: readonly ObjectFile[], options: LinkOptions = {}): Uint8Array {
  if (objects.length === 0) throw new Error('link: no object files');
  const entryName = options.entry ?? 'entrypoint';
  const elves = objects.map((o) => new ElfFile(o.bytes, o.name));

  const placed: Placed[] = [];
  for (const elf of elves) {
    if (elf.header.machine !== EM_BPF) throw new Error(`${elf.label}: e_machine ${elf.header.machine} is not BPF (247)`);
    if (elf.header.type !== ET_REL) throw new Error(`${elf.label}: not a relocatable object (e_type ${elf.header.type})`);
    for (const section of elf.sections) classify(elf, section, placed);
  }

  // Layout: all text first, then all read-only data.
  let cursor = TEXT_OFFSET;
  for (const p of placed.filter((x) => x.kind === 'text')) {
    cursor = align(cursor, Math.max(INSN, p.section.addralign));
    p.address = cursor;
    cursor += p.section.size;
  }
  const textEnd = cursor;
  const rodataStart = align(textEnd, 8);
  cursor = rodataStart;
  for (const p of placed.filter((x) => x.kind === 'rodata')) {
    cursor = align(cursor, Math.max(1, p.section.addralign));
    p.address = cursor;
    cursor += p.section.size;
  }
  const rodataEnd = cursor;

  const image = new Uint8Array(rodataEnd);
  for (const p of placed) image.set(p.object.contents(p.section), p.address);
  const imageView = new DataView(image.buffer);

  // Symbols: globals across objects, locals per object.
  const globals = new Map<string, ResolvedSymbol>();
  const functions: { name: string; address: number; size: number; global: boolean }[] = [];
  const placedBySection = new Map<string, Placed>();
  for (const p of placed) placedBySection.set(`${p.object.label}#${p.section.index}`, p);
  const symbolTables = new Map<ElfFile, ReturnType<ElfFile['symbols']>>();
  for (const elf of elves) {
    const table = elf.sections.find((s) => s.type === SHT_SYMTAB);
    const symbols = table ? elf.symbols(table) : [];
    symbolTables.set(elf, symbols);
    for (const symbol of symbols) {
      if (symbol.shndx === SHN_COMMON) throw new Error(`${elf.label}: COMMON symbol ${symbol.name} (a writable global) is not supported`);
      if (symbol.shndx === SHN_UNDEF || symbol.shndx === SHN_ABS || symbol.shndx >= 0xff00) continue;
      const home = placedBySection.get(`${elf.label}#${symbol.shndx}`);
      if (!home) continue;
      const address = home.address + Number(symbol.value);
      if (symbol.type === STT_FUNC && home.kind === 'text') {
        functions.push({ name: symbol.name, address, size: Number(symbol.size), global: symbol.bind !== STB_LOCAL });
      }
      if (symbol.bind !== STB_LOCAL && symbol.type !== STT_SECTION) {
        if (globals.has(symbol.name)) throw new Error(`${elf.label}: ${symbol.name} is defined twice`);
        globals.set(symbol.name, { address, type: symbol.type });
      }
    }
  }
  const entry = globals.get(entryName);
  if (!entry || entry.address < TEXT_OFFSET || entry.address >= textEnd) {
    throw new Error(`link: no function ${entryName} in .text`);
  }

  // Relocations.
  const syscalls: string[] = [];
  const dynamicRelocations: { offset: number; symbol: number }[] = [];
  for (const elf of elves) {
    const symbols = symbolTables.get(elf) ?? [];
    for (const relSection of elf.sections.filter((s) => s.type === SHT_REL || s.type === SHT_RELA)) {
      const target = elf.sections[relSection.info];
      if (!target || (target.flags & SHF_ALLOC) === 0n) continue; // debug info: dropped with its section
      if (relSection.type === SHT_RELA) throw new Error(`${elf.label}: RELA relocations (${relSection.name}) are not BPF's; refusing`);
      const home = placedBySection.get(`${elf.label}#${target.index}`);
      if (!home) throw new Error(`${elf.label}: relocations for the dropped section ${target.name}`);
      for (const rel of elf.relocations(relSection)) {
        const symbol = symbols[rel.symbol];
        if (!symbol) throw new Error(`${elf.label}: relocation names symbol #${rel.symbol}, which does not exist`);
        const at = home.address + Number(rel.offset);
        const where = `${elf.label} ${target.name}+0x${rel.offset.toString(16)}`;
        const symbolAddress = (): number => {
          if (symbol.shndx === SHN_UNDEF) {
            const global = globals.get(symbol.name);
            if (!global) throw new Error(`${where}: undefined symbol ${symbol.name}`);
            return global.address;
          }
          const symbolHome = placedBySection.get(`${elf.label}#${symbol.shndx}`);
          if (!symbolHome) throw new Error(`${where}: ${symbol.name || 'a symbol'} lies in a section that is not linked`);
          return symbolHome.address + Number(symbol.value);
        };
        switch (rel.type) {
          case R_BPF_64_64: {
            if (home.kind !== 'text' || image[at] !== OP_LDDW) throw new Error(`${where}: R_BPF_64_64 not on an lddw instruction`);
            const addend = BigInt(imageView.getUint32(at + 4, true)) | (BigInt(imageView.getUint32(at + 12, true)) << 32n);
            const value = MM_PROGRAM_START + BigInt(symbolAddress()) + addend;
            imageView.setUint32(at + 4, Number(value & 0xffffffffn), true);
            imageView.setUint32(at + 12, Number(value >> 32n), true);
            break;
          }
          case R_BPF_64_ABS64: {
            const addend = imageView.getBigUint64(at, true);
            imageView.setBigUint64(at, MM_PROGRAM_START + BigInt(symbolAddress()) + addend, true);
            break;
          }
          case R_BPF_64_32: {
            if (home.kind !== 'text' || image[at] !== OP_CALL) throw new Error(`${where}: R_BPF_64_32 not on a call instruction`);
            if (symbol.type === STT_SECTION) {
              throw new Error(`${where}: a call relocated against a section symbol (compile without -ffunction-sections)`);
            }
            const defined = symbol.shndx !== SHN_UNDEF || globals.has(symbol.name);
            if (defined) {
              const target = symbolAddress();
              if (target < TEXT_OFFSET || target >= textEnd) throw new Error(`${where}: call to ${symbol.name}, which is not in .text`);
              imageView.setInt32(at + 4, (target - (at + INSN)) / INSN, true);
            } else {
              if (!KNOWN_SYSCALLS.has(symbol.name)) {
                throw new Error(`${where}: undefined symbol ${symbol.name} (not a function of the program nor a known syscall)`);
              }
              let index = syscalls.indexOf(symbol.name);
              if (index < 0) index = syscalls.push(symbol.name) - 1;
              imageView.setInt32(at + 4, -1, true);
              dynamicRelocations.push({ offset: at, symbol: index + 1 });
            }
            break;
          }
          default:
            throw new Error(`${where}: relocation type ${rel.type} is not supported (R_BPF_64_64, R_BPF_64_ABS64, R_BPF_64_32 only)`);
        }
      }
    }
  }

  checkAndRewriteText(image, placed);
  return writeSharedObject({ image, textEnd, rodataStart, rodataEnd, entry: entry.address, syscalls, dynamicRelocations, functions });
}

function classify(elf: ElfFile, section: SectionHeader, placed: Placed[]): void {
  if ((section.flags & SHF_ALLOC) === 0n) return; // symbols, strings, BTF, debug info, addrsig
  if (section.size === 0) return;
  const where = `${elf.label}: section ${section.name}`;
  if (section.type === SHT_NOBITS) throw new Error(`${where} holds writable zeroed data (.bss); SBPFv0 has no writable globals`);
  if (section.type !== SHT_PROGBITS) throw new Error(`${where} has type ${section.type}; only PROGBITS is linked`);
  if ((section.flags & SHF_EXECINSTR) !== 0n) {
    if (!isTextName(section.name)) throw new Error(`${where} is executable but not .text`);
    placed.push({ object: elf, section, address: 0, kind: 'text' });
    return;
  }
  if (isRodataName(section.name)) {
    placed.push({ object: elf, section, address: 0, kind: 'rodata' });
    return;
  }
  if ((section.flags & SHF_WRITE) !== 0n) throw new Error(`${where} is writable data; SBPFv0 has no writable globals`);
  throw new Error(`${where} is not .text, .rodata* or .data.rel.ro*`);
}

/** Refuses instructions SBPFv0 reads differently (-mcpu=v3/v4) and moves callx's register to the immediate. */
function checkAndRewriteText(image: Uint8Array, placed: readonly Placed[]): void {
  const view = new DataView(image.buffer);
  for (const p of placed.filter((x) => x.kind === 'text')) {
    const where = (at: number): string => `${p.object.label} ${p.section.name}+0x${(at - p.address).toString(16)}`;
    for (let at = p.address; at < p.address + p.section.size; at += INSN) {
      const opcode = image[at] ?? 0;
      const cls = opcode & 0x07;
      if (cls === CLASS_ALU32 || cls === CLASS_JMP32 || (cls === CLASS_LDX && (opcode & 0xe0) === MODE_MEMSX)) {
        throw new Error(
          `${where(at)}: opcode 0x${opcode.toString(16)} is a 32-bit ALU/JMP32/sign-extending instruction of -mcpu=v3/v4, which SBPFv0 executes differently; compile with -mcpu=v2`,
        );
      }
      if (opcode === OP_LDDW) {
        at += INSN;
        continue;
      }
      if (opcode === OP_CALLX) {
        const registers = image[at + 1] ?? 0;
        const dst = registers & 0x0f;
        const imm = view.getInt32(at + 4, true);
        if (imm === 0 && dst !== 0) {
          image[at + 1] = registers & 0xf0;
          view.setInt32(at + 4, dst, true);
        }
      }
    }
  }
}

interface Output {
  image: Uint8Array;
  textEnd: number;
  rodataStart: number;
  rodataEnd: number;
  entry: number;
  syscalls: string[];
  dynamicRelocations: { offset: number; symbol: number }[];
  functions: { name: string; address: number; size: number; global: boolean }[];
}

class StringTable {
  private readonly parts: Uint8Array[] = [new Uint8Array(1)];
  private length = 1;
  add(name: string): number {
    const at = this.length;
    const bytes = new TextEncoder().encode(`${name}\0`);
    this.parts.push(bytes);
    this.length += bytes.length;
    return at;
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
}

function symbolEntry(name: number, info: number, shndx: number, value: bigint, size: bigint): Uint8Array {
  const out = new Uint8Array(24);
  const v = new DataView(out.buffer);
  v.setUint32(0, name, true);
  v.setUint8(4, info);
  v.setUint16(6, shndx, true);
  v.setBigUint64(8, value, true);
  v.setBigUint64(16, size, true);
  return out;
}

const SECTION_INDEX = { text: 1, rodata: 2, dynamic: 3, dynsym: 4, dynstr: 5, reldyn: 6, shstrtab: 7, symtab: 8, strtab: 9 } as const;

function writeSharedObject(out: Output): Uint8Array {
  const dynstr = new StringTable();
  const dynsym = [new Uint8Array(24), ...out.syscalls.map((name) => symbolEntry(dynstr.add(name), (STB_GLOBAL << 4) | STT_NOTYPE, 0, 0n, 0n))];
  const dynstrBytes = dynstr.bytes();
  const relDyn = new Uint8Array(out.dynamicRelocations.length * 16);
  out.dynamicRelocations.forEach((rel, i) => {
    const v = new DataView(relDyn.buffer);
    v.setBigUint64(i * 16, BigInt(rel.offset), true);
    v.setBigUint64(i * 16 + 8, (BigInt(rel.symbol) << 32n) | BigInt(R_BPF_64_32), true);
  });

  const dynamicAt = align(out.rodataEnd, 8);
  const dynamicEntries = 10;
  const dynsymAt = dynamicAt + dynamicEntries * 16;
  const dynsymSize = dynsym.length * 24;
  const dynstrAt = dynsymAt + dynsymSize;
  const relDynAt = align(dynstrAt + dynstrBytes.length, 8);
  const relDynEnd = relDynAt + relDyn.length;

  const DT = { NULL: 0, STRTAB: 5, SYMTAB: 6, STRSZ: 10, SYMENT: 11, REL: 17, RELSZ: 18, RELENT: 19, TEXTREL: 22, FLAGS: 30 };
  const dynamic: [number, number][] = [
    [DT.FLAGS, 4 /* DF_TEXTREL */],
    ...(relDyn.length > 0
      ? ([
          [DT.REL, relDynAt],
          [DT.RELSZ, relDyn.length],
          [DT.RELENT, 16],
        ] as [number, number][])
      : []),
    [DT.SYMTAB, dynsymAt],
    [DT.SYMENT, 24],
    [DT.STRTAB, dynstrAt],
    [DT.STRSZ, dynstrBytes.length],
    [DT.TEXTREL, 0],
  ];
  while (dynamic.length < dynamicEntries) dynamic.push([DT.NULL, 0]);

  const shstrtab = new StringTable();
  const names = {
    text: shstrtab.add('.text'),
    rodata: shstrtab.add('.rodata'),
    dynamic: shstrtab.add('.dynamic'),
    dynsym: shstrtab.add('.dynsym'),
    dynstr: shstrtab.add('.dynstr'),
    reldyn: shstrtab.add('.rel.dyn'),
    shstrtab: shstrtab.add('.shstrtab'),
    symtab: shstrtab.add('.symtab'),
    strtab: shstrtab.add('.strtab'),
  };
  const shstrtabBytes = shstrtab.bytes();
  const shstrtabAt = relDynEnd;

  // .symtab: the program's functions (locals first), so the runtime can name where a failure happened.
  const strtab = new StringTable();
  const ordered = [...out.functions.filter((f) => !f.global), ...out.functions.filter((f) => f.global)];
  const symtab = [
    new Uint8Array(24),
    ...ordered.map((f) =>
      symbolEntry(strtab.add(f.name), ((f.global ? STB_GLOBAL : STB_LOCAL) << 4) | STT_FUNC, SECTION_INDEX.text, BigInt(f.address), BigInt(f.size)),
    ),
  ];
  const firstGlobal = 1 + out.functions.filter((f) => !f.global).length;
  const strtabBytes = strtab.bytes();
  const symtabAt = align(shstrtabAt + shstrtabBytes.length, 8);
  const strtabAt = symtabAt + symtab.length * 24;
  const sectionHeadersAt = align(strtabAt + strtabBytes.length, 8);
  const sectionCount = 10;
  const file = new Uint8Array(sectionHeadersAt + sectionCount * 64);
  const v = new DataView(file.buffer);

  // ELF header
  file.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0);
  v.setUint16(16, ET_DYN, true);
  v.setUint16(18, EM_BPF, true);
  v.setUint32(20, 1, true);
  v.setBigUint64(24, BigInt(out.entry), true);
  v.setBigUint64(32, 64n, true);
  v.setBigUint64(40, BigInt(sectionHeadersAt), true);
  v.setUint32(48, 0, true); // e_flags 0: SBPFv0
  v.setUint16(52, 64, true);
  v.setUint16(54, 56, true);
  v.setUint16(56, 4, true);
  v.setUint16(58, 64, true);
  v.setUint16(60, sectionCount, true);
  v.setUint16(62, SECTION_INDEX.shstrtab, true);

  const programHeader = (index: number, type: number, flags: number, at: number, size: number): void => {
    const o = 64 + index * 56;
    v.setUint32(o, type, true);
    v.setUint32(o + 4, flags, true);
    v.setBigUint64(o + 8, BigInt(at), true);
    v.setBigUint64(o + 16, BigInt(at), true);
    v.setBigUint64(o + 24, BigInt(at), true);
    v.setBigUint64(o + 32, BigInt(size), true);
    v.setBigUint64(o + 40, BigInt(size), true);
    v.setBigUint64(o + 48, type === PT_LOAD ? 0x1000n : 8n, true);
  };
  const R = 4;
  const X = 1;
  programHeader(0, PT_LOAD, R | X, TEXT_OFFSET, out.textEnd - TEXT_OFFSET);
  programHeader(1, PT_LOAD, R, out.rodataStart, out.rodataEnd - out.rodataStart);
  programHeader(2, PT_LOAD, R, dynsymAt, relDynEnd - dynsymAt);
  programHeader(3, PT_DYNAMIC, R, dynamicAt, dynamicEntries * 16);

  file.set(out.image.subarray(TEXT_OFFSET), TEXT_OFFSET);
  dynamic.forEach(([tag, value], i) => {
    v.setBigUint64(dynamicAt + i * 16, BigInt(tag), true);
    v.setBigUint64(dynamicAt + i * 16 + 8, BigInt(value), true);
  });
  dynsym.forEach((entry, i) => file.set(entry, dynsymAt + i * 24));
  file.set(dynstrBytes, dynstrAt);
  file.set(relDyn, relDynAt);
  file.set(shstrtabBytes, shstrtabAt);
  symtab.forEach((entry, i) => file.set(entry, symtabAt + i * 24));
  file.set(strtabBytes, strtabAt);

  const sectionHeader = (
    index: number,
    s: { name: number; type: number; flags: bigint; at: number; size: number; link?: number; info?: number; align: number; entsize?: number; allocated: boolean },
  ): void => {
    const o = sectionHeadersAt + index * 64;
    v.setUint32(o, s.name, true);
    v.setUint32(o + 4, s.type, true);
    v.setBigUint64(o + 8, s.flags, true);
    v.setBigUint64(o + 16, s.allocated ? BigInt(s.at) : 0n, true);
    v.setBigUint64(o + 24, BigInt(s.at), true);
    v.setBigUint64(o + 32, BigInt(s.size), true);
    v.setUint32(o + 40, s.link ?? 0, true);
    v.setUint32(o + 44, s.info ?? 0, true);
    v.setBigUint64(o + 48, BigInt(s.align), true);
    v.setBigUint64(o + 56, BigInt(s.entsize ?? 0), true);
  };
  const A = SHF_ALLOC;
  sectionHeader(SECTION_INDEX.text, { name: names.text, type: SHT_PROGBITS, flags: A | SHF_EXECINSTR, at: TEXT_OFFSET, size: out.textEnd - TEXT_OFFSET, align: 8, allocated: true });
  sectionHeader(SECTION_INDEX.rodata, { name: names.rodata, type: SHT_PROGBITS, flags: A, at: out.rodataStart, size: out.rodataEnd - out.rodataStart, align: 8, allocated: true });
  sectionHeader(SECTION_INDEX.dynamic, { name: names.dynamic, type: SHT_DYNAMIC, flags: A, at: dynamicAt, size: dynamicEntries * 16, link: SECTION_INDEX.dynstr, align: 8, entsize: 16, allocated: true });
  sectionHeader(SECTION_INDEX.dynsym, { name: names.dynsym, type: SHT_DYNSYM, flags: A, at: dynsymAt, size: dynsymSize, link: SECTION_INDEX.dynstr, info: 1, align: 8, entsize: 24, allocated: true });
  sectionHeader(SECTION_INDEX.dynstr, { name: names.dynstr, type: SHT_STRTAB, flags: A, at: dynstrAt, size: dynstrBytes.length, align: 1, allocated: true });
  sectionHeader(SECTION_INDEX.reldyn, { name: names.reldyn, type: SHT_REL, flags: A, at: relDynAt, size: relDyn.length, link: SECTION_INDEX.dynsym, align: 8, entsize: 16, allocated: true });
  sectionHeader(SECTION_INDEX.shstrtab, { name: names.shstrtab, type: SHT_STRTAB, flags: 0n, at: shstrtabAt, size: shstrtabBytes.length, align: 1, allocated: false });
  sectionHeader(SECTION_INDEX.symtab, { name: names.symtab, type: SHT_SYMTAB, flags: 0n, at: symtabAt, size: symtab.length * 24, link: SECTION_INDEX.strtab, info: firstGlobal, align: 8, entsize: 24, allocated: false });
  sectionHeader(SECTION_INDEX.strtab, { name: names.strtab, type: SHT_STRTAB, flags: 0n, at: strtabAt, size: strtabBytes.length, align: 1, allocated: false });
  return file;
}
