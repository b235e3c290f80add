/**
 * The SBPFv0 linker: the shape of what it writes (checked field by field against the loader's rules),
 * a hand-made program that needs data relocations and callx run for real, and the objects it refuses.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { compileObject, CONTRACTS_DIR } from '../../../../src/localnet/solana/programs/build.ts';
import { ElfFile, EM_BPF, ET_DYN, PT_DYNAMIC, PT_LOAD, SHF_ALLOC, SHT_REL, SHT_SYMTAB } from '../../../../src/localnet/solana/programs/elf.ts';
import { KNOWN_SYSCALLS, linkSbpfV0, MM_PROGRAM_START, R_BPF_64_32, R_BPF_64_ABS64, TEXT_OFFSET } from '../../../../src/localnet/solana/programs/link.ts';
import { solanaProgramsForSuite } from '../../../helpers/solana.ts';
import { World } from './svm.ts';

const built = await solanaProgramsForSuite();

function instructions(elf: ElfFile): { at: number; opcode: number; imm: number }[] {
  const text = elf.section('.text')!;
  const out = [];
  for (let at = text.offset; at < text.offset + text.size; at += 8) {
    out.push({ at, opcode: elf.bytes[at]!, imm: elf.view.getInt32(at + 4, true) });
  }
  return out;
}

describe('SBPFv0 linker', () => {
  for (const name of ['native_swaps', 'spl_swaps'] as const) {
    test(`${name}: ET_DYN for BPF, e_flags 0, the v0 layout, sh_addr == sh_offset`, () => {
      const elf = new ElfFile(built[name], name);
      assert.equal(elf.header.type, ET_DYN);
      assert.equal(elf.header.machine, EM_BPF);
      assert.equal(elf.header.flags, 0, 'SBPFv0');
      assert.equal(elf.header.osabi, 0);
      assert.deepEqual(
        elf.sections.map((s) => s.name),
        ['', '.text', '.rodata', '.dynamic', '.dynsym', '.dynstr', '.rel.dyn', '.shstrtab', '.symtab', '.strtab'],
      );
      const text = elf.section('.text')!;
      assert.equal(text.offset, TEXT_OFFSET);
      for (const s of elf.sections.filter((x) => (x.flags & SHF_ALLOC) !== 0n)) assert.equal(Number(s.addr), s.offset, `${s.name}: sh_addr == sh_offset`);
      const offsets = elf.sections.slice(1).map((s) => s.offset);
      assert.deepEqual(offsets, [...offsets].sort((a, b) => a - b), 'sections in file order');
      assert.deepEqual(
        elf.programHeaders.map((p) => [p.type, p.flags]),
        [[PT_LOAD, 5], [PT_LOAD, 4], [PT_LOAD, 4], [PT_DYNAMIC, 4]],
      );
      const [loadText, loadRodata, loadDynamic] = elf.programHeaders;
      assert.equal(Number(loadText!.offset), text.offset);
      assert.equal(Number(loadText!.filesz), text.size);
      assert.equal(Number(loadRodata!.offset), elf.section('.rodata')!.offset);
      assert.equal(Number(loadDynamic!.offset), elf.section('.dynsym')!.offset);
      assert.ok(loadText!.vaddr < loadRodata!.vaddr && loadRodata!.vaddr < loadDynamic!.vaddr);

      const symbols = elf.symbols(elf.sections.find((s) => s.type === SHT_SYMTAB)!);
      const entry = symbols.find((s) => s.name === 'entrypoint');
      assert.ok(entry, '.symtab names the entrypoint');
      assert.equal(elf.header.entry, entry.value);
      assert.ok(symbols.filter((s) => s.name !== 'entrypoint' && s.value >= BigInt(text.offset)).length >= 3, '.symtab names the program functions');
    });

    test(`${name}: every syscall call has imm -1 and a .rel.dyn R_BPF_64_32 to a known syscall; lddw points into the image`, () => {
      const elf = new ElfFile(built[name], name);
      const dynsym = elf.symbols(elf.section('.dynsym')!);
      const relocations = elf.relocations(elf.sections.find((s) => s.type === SHT_REL)!);
      assert.ok(relocations.length > 5);
      const relocated = new Set<number>();
      for (const rel of relocations) {
        assert.equal(rel.type, R_BPF_64_32);
        const symbol = dynsym[rel.symbol];
        assert.ok(symbol && KNOWN_SYSCALLS.has(symbol.name), `known syscall: ${symbol?.name}`);
        assert.equal(elf.bytes[Number(rel.offset)], 0x85, 'on a call');
        assert.equal(elf.view.getInt32(Number(rel.offset) + 4, true), -1);
        relocated.add(Number(rel.offset));
      }
      assert.deepEqual(new Set(dynsym.slice(1).map((s) => s.name)).has('sol_invoke_signed_c'), true);
      const insns = instructions(elf);
      for (const insn of insns) {
        if (insn.opcode === 0x85 && insn.imm === -1) assert.ok(relocated.has(insn.at), `call at ${insn.at} without relocation`);
        assert.notEqual(insn.opcode & 7, 4, 'no 32-bit ALU');
        assert.notEqual(insn.opcode & 7, 6, 'no JMP32');
      }
      const lddw = insns.filter((i, n) => i.opcode === 0x18 && insns[n - 1]?.opcode !== 0x18);
      const rodata = elf.section('.rodata')!;
      let intoRodata = 0;
      for (const insn of lddw) {
        const value = BigInt(insn.imm >>> 0) | (BigInt(elf.view.getInt32(insn.at + 12, true) >>> 0) << 32n);
        if (value >= MM_PROGRAM_START + BigInt(rodata.offset) && value < MM_PROGRAM_START + BigInt(rodata.offset + rodata.size)) intoRodata++;
      }
      assert.ok(intoRodata > 0, 'lddw of read-only data resolved to 0x1_0000_0000 + address');
    });
  }

  test('a program with a table of function pointers (R_BPF_64_ABS64) and callx runs in LiteSVM', async () => {
    const source = `
      typedef unsigned long long u64;
      static u64 twice(u64 x) { return 2 * x; }
      static u64 square(u64 x) { return x * x; }
      static u64 plus_seven(u64 x) { return x + 7; }
      typedef u64 (*op)(u64);
      static const op OPS[3] = { twice, square, plus_seven };
      u64 entrypoint(const unsigned char *input) {
        /* no accounts: u64 0, then the instruction data length and data */
        const unsigned char *data = input + 16;
        volatile op f = OPS[data[0] % 3];
        return 1000 + f(data[1]);
      }`;
    const object = await compileObject(source);
    const objectElf = new ElfFile(object, 'ops.o');
    const relocationTypes = objectElf.sections
      .filter((s) => s.type === SHT_REL && (objectElf.sections[s.info]!.flags & SHF_ALLOC) !== 0n)
      .flatMap((s) => objectElf.relocations(s).map((r) => r.type));
    assert.ok(relocationTypes.includes(R_BPF_64_ABS64), `the object needs data relocations: ${relocationTypes.join(',')}`);
    const so = linkSbpfV0([{ name: 'ops.o', bytes: object }]);
    assert.ok(instructions(new ElfFile(so, 'ops.so')).some((i) => i.opcode === 0x8d), 'the program uses callx');

    const world = await World.create(built);
    const programId = (await generateKeyPairSigner()).address;
    world.svm.addProgram(programId, so);
    const run = async (op: number, x: number): Promise<number | undefined> =>
      (await world.send([{ programAddress: programId, accounts: [], data: Uint8Array.of(op, x) }])).customError;
    assert.equal(await run(0, 21), 1042);
    assert.equal(await run(1, 12), 1144);
    assert.equal(await run(2, 5), 1012);
  });

  test('debug info (-g: DWARF, BTF and their relocations) is dropped; the program links to the same code', async () => {
    const source = readFileSync(join(CONTRACTS_DIR, 'native_swaps.c'), 'utf8');
    const withDebug = await compileObject(source, ['-g', `-I${CONTRACTS_DIR}`]);
    const debugSections = new ElfFile(withDebug, 'g.o').sections.map((s) => s.name);
    assert.ok(debugSections.includes('.BTF') && debugSections.some((n) => n.startsWith('.rel.debug')), debugSections.join(' '));
    const linked = new ElfFile(linkSbpfV0([{ name: 'g.o', bytes: withDebug }]), 'g.so');
    const reference = new ElfFile(built.native_swaps, 'native_swaps');
    assert.deepEqual(linked.sections.map((s) => s.name), reference.sections.map((s) => s.name));
    assert.deepEqual(linked.contents(linked.section('.text')!), reference.contents(reference.section('.text')!));
  });

  test('refuses -mcpu=v3 objects (32-bit ALU and JMP32 mean other things in SBPFv0)', async () => {
    const source = `
      typedef unsigned int u32; typedef unsigned long long u64;
      u64 entrypoint(const unsigned char *in) { u32 a = *(const u32 *)in, b = *(const u32 *)(in + 4); return a > b ? a * b : a + b; }`;
    const v3 = await compileObject(source, ['-mcpu=v3']);
    assert.throws(() => linkSbpfV0([{ name: 'v3.o', bytes: v3 }]), /v3\.o \.text\+0x[0-9a-f]+: opcode 0x[0-9a-f]+ .*-mcpu=v3\/v4.*compile with -mcpu=v2/);
    const v2 = await compileObject(source);
    assert.ok(linkSbpfV0([{ name: 'v2.o', bytes: v2 }]).length > 0, 'the same source at -mcpu=v2 links');
  });

  test('refuses writable globals, unknown external functions and objects without an entrypoint', async () => {
    const writable = await compileObject(`
      typedef unsigned long long u64; u64 counter = 5;
      u64 entrypoint(const unsigned char *in) { counter += in[0]; return counter; }`);
    assert.throws(() => linkSbpfV0([{ name: 'data.o', bytes: writable }]), /data\.o: section \.data is writable data; SBPFv0 has no writable globals/);
    const zeroed = await compileObject(`
      typedef unsigned long long u64; u64 counter;
      u64 entrypoint(const unsigned char *in) { counter += in[0]; return counter; }`);
    assert.throws(() => linkSbpfV0([{ name: 'bss.o', bytes: zeroed }]), /bss\.o: .*(\.bss|COMMON)/);
    const unknown = await compileObject(`
      typedef unsigned long long u64; extern u64 sol_not_a_syscall(u64);
      u64 entrypoint(const unsigned char *in) { return sol_not_a_syscall(in[0]); }`);
    assert.throws(() => linkSbpfV0([{ name: 'unknown.o', bytes: unknown }]), /undefined symbol sol_not_a_syscall \(not a function of the program nor a known syscall\)/);
    const noEntry = await compileObject(`typedef unsigned long long u64; u64 main(const unsigned char *in) { return in[0]; }`);
    assert.throws(() => linkSbpfV0([{ name: 'main.o', bytes: noEntry }]), /no function entrypoint in \.text/);
    assert.throws(() => linkSbpfV0([{ name: 'so', bytes: built.native_swaps }]), /so: not a relocatable object/);
  });
});
