/** Just enough ELF64 little-endian reading for the linker and its tests. */

export const EM_BPF = 247;
export const ET_REL = 1;
export const ET_DYN = 3;

export const SHT_NULL = 0;
export const SHT_PROGBITS = 1;
export const SHT_SYMTAB = 2;
export const SHT_STRTAB = 3;
export const SHT_RELA = 4;
export const SHT_DYNAMIC = 6;
export const SHT_NOBITS = 8;
export const SHT_REL = 9;
export const SHT_DYNSYM = 11;

export const SHF_WRITE = 0x1n;
export const SHF_ALLOC = 0x2n;
export const SHF_EXECINSTR = 0x4n;

export const SHN_UNDEF = 0;
export const SHN_ABS = 0xfff1;
export const SHN_COMMON = 0xfff2;

export const STT_NOTYPE = 0;
export const STT_OBJECT = 1;
export const STT_FUNC = 2;
export const STT_SECTION = 3;
export const STB_LOCAL = 0;
export const STB_GLOBAL = 1;

export const PT_LOAD = 1;
export const PT_DYNAMIC = 2;

export interface ElfHeader {
  type: number;
  machine: number;
  flags: number;
  entry: bigint;
  phoff: bigint;
  shoff: bigint;
  phnum: number;
  shnum: number;
  shstrndx: number;
  osabi: number;
}

export interface SectionHeader {
  index: number;
  name: string;
  type: number;
  flags: bigint;
  addr: bigint;
  offset: number;
  size: number;
  link: number;
  info: number;
  addralign: number;
  entsize: number;
}

export interface ProgramHeader {
  type: number;
  flags: number;
  offset: bigint;
  vaddr: bigint;
  filesz: bigint;
  memsz: bigint;
}

export interface ElfSymbol {
  name: string;
  value: bigint;
  size: bigint;
  type: number;
  bind: number;
  shndx: number;
}

export interface ElfRel {
  offset: bigint;
  type: number;
  symbol: number;
}

export class ElfFile {
  readonly view: DataView;
  readonly header: ElfHeader;
  readonly sections: SectionHeader[];
  readonly programHeaders: ProgramHeader[];

  constructor(
    readonly bytes: Uint8Array,
    readonly label: string,
  ) {
    if (bytes.length < 64 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
      throw new Error(`${label}: not an ELF file`);
    }
    if (bytes[4] !== 2 || bytes[5] !== 1) throw new Error(`${label}: not a 64-bit little-endian ELF file`);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const v = this.view;
    this.header = {
      osabi: bytes[7] ?? 0,
      type: v.getUint16(16, true),
      machine: v.getUint16(18, true),
      entry: v.getBigUint64(24, true),
      phoff: v.getBigUint64(32, true),
      shoff: v.getBigUint64(40, true),
      flags: v.getUint32(48, true),
      phnum: v.getUint16(56, true),
      shnum: v.getUint16(60, true),
      shstrndx: v.getUint16(62, true),
    };
    const rawSections = Array.from({ length: this.header.shnum }, (_, index) => {
      const at = Number(this.header.shoff) + index * 64;
      this.requireRange(at, 64, 'section header');
      return {
        index,
        nameOffset: v.getUint32(at, true),
        type: v.getUint32(at + 4, true),
        flags: v.getBigUint64(at + 8, true),
        addr: v.getBigUint64(at + 16, true),
        offset: Number(v.getBigUint64(at + 24, true)),
        size: Number(v.getBigUint64(at + 32, true)),
        link: v.getUint32(at + 40, true),
        info: v.getUint32(at + 44, true),
        addralign: Number(v.getBigUint64(at + 48, true)),
        entsize: Number(v.getBigUint64(at + 56, true)),
      };
    });
    const names = rawSections[this.header.shstrndx];
    this.sections = rawSections.map(({ nameOffset, ...section }) => ({
      ...section,
      name: names ? this.stringAt(names.offset + nameOffset, names.offset + names.size) : '',
    }));
    this.programHeaders = Array.from({ length: this.header.phnum }, (_, index) => {
      const at = Number(this.header.phoff) + index * 56;
      this.requireRange(at, 56, 'program header');
      return {
        type: v.getUint32(at, true),
        flags: v.getUint32(at + 4, true),
        offset: v.getBigUint64(at + 8, true),
        vaddr: v.getBigUint64(at + 16, true),
        filesz: v.getBigUint64(at + 32, true),
        memsz: v.getBigUint64(at + 40, true),
      };
    });
  }

  section(name: string): SectionHeader | undefined {
    return this.sections.find((s) => s.name === name);
  }

  contents(section: SectionHeader): Uint8Array {
    if (section.type === SHT_NOBITS) return new Uint8Array(section.size);
    this.requireRange(section.offset, section.size, `section ${section.name}`);
    return this.bytes.subarray(section.offset, section.offset + section.size);
  }

  symbols(table: SectionHeader): ElfSymbol[] {
    const strings = this.sections[table.link];
    if (!strings) throw new Error(`${this.label}: symbol table ${table.name} has no string table`);
    const data = this.contents(table);
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    return Array.from({ length: Math.floor(data.length / 24) }, (_, i) => {
      const at = i * 24;
      const info = view.getUint8(at + 4);
      return {
        name: this.stringAt(strings.offset + view.getUint32(at, true), strings.offset + strings.size),
        type: info & 0xf,
        bind: info >> 4,
        shndx: view.getUint16(at + 6, true),
        value: view.getBigUint64(at + 8, true),
        size: view.getBigUint64(at + 16, true),
      };
    });
  }

  relocations(section: SectionHeader): ElfRel[] {
    const data = this.contents(section);
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    return Array.from({ length: Math.floor(data.length / 16) }, (_, i) => {
      const info = view.getBigUint64(i * 16 + 8, true);
      return { offset: view.getBigUint64(i * 16, true), type: Number(info & 0xffffffffn), symbol: Number(info >> 32n) };
    });
  }

  private stringAt(start: number, end: number): string {
    let stop = start;
    while (stop < end && this.bytes[stop] !== 0) stop++;
    return new TextDecoder().decode(this.bytes.subarray(start, stop));
  }

  private requireRange(at: number, length: number, what: string): void {
    if (at < 0 || at + length > this.bytes.length) throw new Error(`${this.label}: ${what} lies outside the file`);
  }
}
