// File: report/page_data.h
// What report.html carries of a run's files: what the page reads, once.
// graph.json's nodes repeat each tensor's dtype and shape, which its values
// already hold (the page looks them up there), and summary.json's suspects
// are for the terminal; a 10,000-node run's page is half the size without.
// The files themselves are untouched: serve and "load files" read them whole.
#pragma once

#include <string>

namespace opscope {

// graph.json less what web/model.js rebuilds exactly: a node's tensors'
// dtype and shape (its values'), its layer, a namespace that is its name
// less the last part, a fusion's reason that its compiled node words, empty
// lists, "executable": true and a value's "constant": false (the
// defaults), pos's rank and order (the layout's slots hold them), and the
// mapping (each framework node's compiled_node_id holds it).
// Text that is not a JSON object is returned as it is (BuildReportHtml's
// callers have checked the files; the page reports what it cannot read).
std::string GraphForPage(const std::string& graph_json);

// diff.json (opscope/model.h's DiffRunFolders) as the page reads it: the
// per-node times that moved beyond the noise (the others counted in
// "node_times_unchanged" and "node_times_within_noise"), each with its
// verdict, change and the two medians to the nanosecond,
// and without the fields kept for older readers (op_type_time,
// total_task_us, top_tasks). A 10,000-node run compared with another run
// of its model adds a few per cent to its page.
std::string DiffForPage(const std::string& diff_json);

// summary.json without "suspects" and the per-task roofline (the page reads
// neither; each task's bound is in trace.json's args).
std::string SummaryForPage(const std::string& summary_json);

// accuracy.json (`inspector-cli accuracy` written into this run's folder) as
// the page reads it: the verdict, the first divergent node and per compiled
// node its errors, decisions and replay line, without the replay's file list,
// the timings and the repro. `run_id` is the folder's run: a file of another
// run (or none recorded), or one that is not an accuracy report, becomes
// {"error": "..."} saying so, which the page shows instead of colouring
// nodes with another run's numbers. `file` names it in that message.
std::string AccuracyForPage(const std::string& accuracy_json, const std::string& run_id, const std::string& file);

}  // namespace opscope
