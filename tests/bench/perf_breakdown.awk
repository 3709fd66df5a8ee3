# perf_breakdown.awk - sorts the samples of `perf script -F comm,tid,ip,sym`
# (recorded with -g) into where an event's time goes, for scripts/bench
# --profile. Only samples of one thread (tid=) or one command (comm=) count.
#
#   awk -v mode=traced -v tid=PID -f perf_breakdown.awk   # the traced thread
#   awk -v mode=loader -v comm=NAME -v symmap=FILE -f perf_breakdown.awk
#                                           # ctrace-bpf or loader_replay
#
# symmap: "symbol module" lines (from nm of build/userspace/*.o), so that a
# static function is charged to the source file that defines it.
#
# Prints "category<TAB>samples<TAB>percent", largest first.
#
# traced: the first rule that matches anywhere in a sample's call chain
# wins, in this order, so that a helper is charged to what called it:
#   wake-ups     irq_work raised by bpf_ringbuf_output(BPF_RB_FORCE_WAKEUP):
#                a self-IPI (an MSR write, a VM exit when virtualized)
#   strings      bpf_probe_read_user_str: the name and args copies
#   ring buffer  reserve/commit/query and the record's memcpy
#   BPF program  the program's own code and its other helpers (map lookup,
#                ktime, pid)
#   uprobe       the rest of the uprobe path: trampoline (call + syscall),
#                uprobe lookup (vma tree), dispatch to the BPF link, return
#   interrupts   timer ticks and other interrupts that land meanwhile
#   user         the program's own loop and the site's instructions
# loader: the first frame from the leaf up that belongs to one of the
# loader's modules decides (so a memcpy is charged to whoever called it,
# when the unwinder saw the caller: libc has no frame pointers, so a libc
# leaf often shows the caller's caller).

function classify_traced(    i, s, chain) {
	chain = ""
	for (i = 1; i <= n; i++)
		chain = chain " " sym[i]
	if (chain ~ / (irq_work_queue|__irq_work_queue_local|arch_irq_work_raise|native_apic_msr_write|x2apic_send_IPI_self)/)
		return "wake-ups (irq_work self-IPI)"
	if (chain ~ / (bpf_probe_read_user_str|strncpy_from_user|strncpy_from_user_nofault|bpf_probe_read_user)( |$)/)
		return "string copies (probe_read_user_str)"
	if (chain ~ / (bpf_ringbuf_output|__bpf_ringbuf_reserve|bpf_ringbuf_reserve|bpf_ringbuf_commit|bpf_ringbuf_submit|bpf_ringbuf_query)( |$)/)
		return "ring buffer (reserve, copy, commit, query)"
	if (chain ~ / bpf_prog_/)
		return "BPF program (own code, other helpers)"
	if (chain ~ / (sysvec_|asm_sysvec_|irq_exit|__irq_exit_rcu|handle_softirqs|asm_common_interrupt)/)
		return "interrupts (timer, other)"
	if (chain ~ / (__x64_sys_uprobe|handle_syscall_uprobe|handler_chain|uprobe_|find_active_uprobe|exc_int3|handle_swbp|uprobe_notify_resume|arch_uprobe|entry_SYSCALL|do_syscall_64|syscall_exit|asm_exc_int3|irqentry_exit)/)
		return "uprobe (trampoline, syscall, lookup, dispatch)"
	if (kernel[1])
		return "kernel, other"
	if (sym[1] == "[unknown]")
		return "uprobe (trampoline, syscall, lookup, dispatch)" # the trampoline page has no symbol
	return "user (loop and site)"
}

function module_category(m) {
	if (m == "json_writer" || m == "chrome_trace")
		return "JSON writer (json_writer, chrome_trace)"
	if (m == "trace_model" || m == "key_map")
		return "trace model (contexts, spans, key_map)"
	if (m == "record_decode")
		return "record decode"
	if (m == "args_json" || m == "cjson")
		return "args (cJSON parse and print)"
	if (m == "proc_info" || m == "model_facts")
		return "/proc reads (names, late strings)"
	if (m == "record_strings" || m == "literal_cache" || m == "file_maps")
		return "strings (literal cache, late reads)"
	if (m == "libbpf")
		return "ring buffer (libbpf consume)"
	if (m ~ /^(cmd_trace|session|session_loop|session_output|loader_replay)$/)
		return "main loop (" m ")"
	return ""
}

function classify_loader(    i, s, c) {
	for (i = 1; i <= n; i++) {
		s = sym[i]
		sub(/\.(isra|part|constprop|cold)\..*$/, "", s)
		if (s in module)
			c = module_category(module[s])
		else if (s ~ /^cJSON/)
			c = module_category("cjson")
		else if (s ~ /^(ring_buffer__|ringbuf_process_ring)/)
			c = module_category("libbpf")
		else if (s ~ /^(ep_poll|do_epoll_wait|__x64_sys_epoll)/)
			c = "epoll wait"
		else if (s ~ /^(ksys_write|__x64_sys_write|vfs_write)/)
			c = "write(2)"
		else
			c = ""
		if (c != "")
			return c
	}
	if (kernel[1])
		return "kernel, other"
	return "unattributed libc (" sym[1] ")"
}

function flush(    c) {
	if (n && keep) {
		c = mode == "traced" ? classify_traced() : classify_loader()
		count[c]++
		total++
	}
	n = 0
}

BEGIN {
	if (symmap != "")
		while ((getline line < symmap) > 0) {
			split(line, f, " ")
			sub(/\.(isra|part|constprop|cold)\..*$/, "", f[1])
			module[f[1]] = f[2]
		}
}

/^[^ \t]/ {
	flush()
	# "comm tid": comm may hold spaces; the tid is the last field.
	keep = (tid != "" && $NF == tid) || (comm != "" && substr($0, 1, length(comm)) == comm)
	next
}

/^[ \t]+[0-9a-f]+ / {
	n++
	kernel[n] = ($1 ~ /^ffffffff/)
	sym[n] = $2
	next
}

/^$/ { flush() }

END {
	flush()
	if (!total) {
		print "no samples"
		exit 1
	}
	for (c in count)
		printf "%s\t%d\t%.1f\n", c, count[c], 100 * count[c] / total | "sort -t '\t' -k2,2nr"
}
