# The amd64 binary holds only x86-64 baseline instructions (SSE2), checked
# statically over every instruction, as a complement to running it under
# qemu64 (t4000, t4010), which also has SSE3 and CMPXCHG16B. Allowed beyond
# the baseline: AES-NI and PCLMULQDQ (not matched below), which only
# mbedtls' aesni.c has and runs only when CPUID reports them, and tzcnt,
# gcc's `rep bsf` that CPUs without BMI1 execute as bsf (gcc emits it only
# where the operand is not zero).
. tests/lib.sh

amd64=$(awk '$1 == "amd64" { print $6 }' "$TB_OUT/emu/targets" 2>/dev/null)
if [ -z "$amd64" ] || [ ! -f "$amd64" ]; then
	skip baseline "no amd64 binary listed in $TB_OUT/emu/targets (./build.sh tests)"
	exit 0
fi
command -v objdump >/dev/null 2>&1 || { skip baseline "objdump (binutils) not installed"; exit 0; }

# Mnemonics of SSE3, SSSE3, SSE4.1/4.2, AVX and later (v-prefixed), FMA, F16C,
# BMI1/2, ABM (popcnt, lzcnt), ADX, MOVBE, RDRAND/RDSEED, CMPXCHG16B.
beyond='^(addsubp|haddp|hsubp|lddqu|movddup|movshdup|movsldup|fisttp|monitor|mwait|pshufb|palignr|pmaddubsw|phadd|phsub|pabs|psign|pmulhrsw|pblend|blendp|blendvp|pmovzx|pmovsx|ptest|pmin[su][bdw]|pmax[su][bdw]|pmuldq|pmulld|packusdw|pcmpeqq|pcmpgtq|phminposuw|round[ps][sd]|pextr[bdq]|pinsr[bdq]|extractps|insertps|dpp[sd]|mpsadbw|movntdqa|crc32|pcmpestr|pcmpistr|popcnt|lzcnt|andn$|bextr|bls[imr]$|bzhi|pdep$|pext$|rorx|sarx|shlx|shrx|mulx|adcx|adox|movbe|rdrand|rdseed|cmpxchg16b|v[a-z])'
objdump -d --no-show-raw-insn "$amd64" >"$TMP/dis" 2>"$TMP/err" ||
	{ fail baseline "objdump failed: $(cat "$TMP/err")"; exit 0; }
awk -F'\t' 'NF >= 2 { split($2, w, " "); print w[1] }' "$TMP/dis" | sort | uniq -c >"$TMP/mnem"
n=$(awk '{ s += $1 } END { print s + 0 }' "$TMP/mnem")
bad=$(awk '{ print $2 }' "$TMP/mnem" | grep -E "$beyond" | grep -vE '^(tzcnt)$' | tr '\n' ' ')
if [ "$n" -gt 100000 ] && [ -z "$bad" ]; then
	pass baseline
else
	fail baseline "$n instructions; beyond x86-64 baseline: ${bad:-none}"
fi
echo "  ($n instructions checked in $amd64)" >&2

