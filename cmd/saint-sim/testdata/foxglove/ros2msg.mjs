// A parser of ros2msg schemas (the .msg text of a type followed by each
// message it uses, after a line of 80 '=' and "MSG: pkg/Name", as rosbag2
// writes them into MCAP files) into the MessageDefinition[] that
// @foxglove/rosmsg2-serialization's MessageReader takes. Foxglove's own
// parser, @foxglove/rosmsg, is only a development dependency of
// @foxglove/rosmsg2-serialization, so npm does not install it with it;
// this small one covers what ROS 2 .msg files hold: primitives, messages
// (qualified or of the same package), fixed arrays, sequences, bounded
// strings, constants, comments.
const primitives = new Set([
  "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
  "float32", "float64", "string", "wstring",
]);
const aliases = { byte: "uint8", char: "uint8" };

function parseFields(pkg, text) {
  const fields = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (line === "") continue;
    const m = /^(\S+)\s+([A-Za-z][A-Za-z0-9_]*)\s*(=\s*(.*))?(\s+.*)?$/.exec(line);
    if (!m) throw new Error(`cannot parse ${JSON.stringify(raw)}`);
    let [, type, name, constant, value] = m;
    let isArray = false;
    let arrayLength;
    const arr = /^(.*)\[(<=)?(\d*)\]$/.exec(type);
    if (arr) {
      isArray = true;
      type = arr[1];
      if (arr[3] !== "" && arr[2] === undefined) arrayLength = Number(arr[3]);
    }
    type = type.replace(/<=\d+$/, ""); // string<=10
    type = aliases[type] ?? type;
    const field = { name, type, isArray };
    if (arrayLength !== undefined) field.arrayLength = arrayLength;
    if (!primitives.has(type)) {
      field.isComplex = true;
      const parts = type.split("/");
      field.type = parts.length === 1 ? `${pkg}/${type}` : `${parts[0]}/${parts[parts.length - 1]}`;
    }
    if (constant !== undefined) {
      field.isConstant = true;
      field.value = value;
    }
    fields.push(field);
  }
  return fields;
}

// parseRos2msg parses schema text of the type schemaName ("pkg/msg/Name")
// and returns the definitions, the top-level one first.
export function parseRos2msg(schemaName, text) {
  const sections = text.split(/\n={80}\n/);
  const [pkg, , top] = schemaName.split("/");
  const defs = [{ name: `${pkg}/${top}`, definitions: parseFields(pkg, sections[0]) }];
  for (const sec of sections.slice(1)) {
    const nl = sec.indexOf("\n");
    const head = nl < 0 ? sec : sec.slice(0, nl);
    const m = /^MSG: (\S+)$/.exec(head.trim());
    if (!m) throw new Error(`section starts with ${JSON.stringify(head)}, want "MSG: pkg/Name"`);
    const parts = m[1].split("/");
    defs.push({ name: `${parts[0]}/${parts[parts.length - 1]}`, definitions: parseFields(parts[0], nl < 0 ? "" : sec.slice(nl + 1)) });
  }
  const names = new Set(defs.map((d) => d.name));
  for (const d of defs) {
    for (const f of d.definitions) {
      if (f.isComplex && !names.has(f.type)) throw new Error(`${d.name}.${f.name}: ${f.type} is not defined in the schema`);
    }
  }
  return defs;
}

// sameAsBus compares a message MessageReader decoded with the JSON payload
// the bus carried (busValue) and returns the first difference, or "".
// The bus writes a NamedValue[] as an object of numbers and uint8[] as
// base64. Numbers are equal when they are at float32 precision (a
// float32 field carries no more).
export function sameAsBus(decoded, busValue, path = "$") {
  if (busValue === null || busValue === undefined) return "";
  if (typeof busValue === "object" && !Array.isArray(busValue)) {
    if (Array.isArray(decoded) && decoded.every((nv) => "name" in nv && "value" in nv)) {
      decoded = Object.fromEntries(decoded.map((nv) => [nv.name, nv.value]));
    }
    if (decoded === null || typeof decoded !== "object") return `${path}: decoded ${typeof decoded}, bus has an object`;
    for (const [k, v] of Object.entries(busValue)) {
      if (!(k in decoded)) return `${path}.${k}: missing from the decoded message`;
      const err = sameAsBus(decoded[k], v, `${path}.${k}`);
      if (err) return err;
    }
    return "";
  }
  if (Array.isArray(busValue)) {
    if (decoded == null || typeof decoded.length !== "number") return `${path}: decoded ${typeof decoded}, bus has an array`;
    if (decoded.length !== busValue.length) return `${path}: ${decoded.length} elements, bus has ${busValue.length}`;
    for (let i = 0; i < busValue.length; i++) {
      const err = sameAsBus(decoded[i], busValue[i], `${path}[${i}]`);
      if (err) return err;
    }
    return "";
  }
  if (typeof busValue === "string" && decoded instanceof Uint8Array) {
    return Buffer.from(decoded).toString("base64") === busValue ? "" : `${path}: bytes differ from the bus's base64`;
  }
  if (typeof busValue === "number") {
    const d = Number(decoded);
    if (typeof decoded !== "number" && typeof decoded !== "bigint") return `${path}: decoded ${typeof decoded}, bus has ${busValue}`;
    if (d === busValue || Math.fround(d) === Math.fround(busValue)) return "";
    return `${path}: decoded ${d}, bus has ${busValue}`;
  }
  return decoded === busValue ? "" : `${path}: decoded ${JSON.stringify(decoded)}, bus has ${JSON.stringify(busValue)}`;
}
