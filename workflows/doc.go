// Package workflows holds bookonce's Temporal workflows: the kit they
// share here, and one package per workflow below it.
//
// A message travels down the packages in this order:
//
//   - conversation: one workflow per customer across voice and WhatsApp;
//     it understands each message, runs the cross-channel dedup decision
//     and starts an appointment, or carries a cancel or move to the
//     booking it means;
//   - appointment: the booking saga (hold, deposit, confirm, capture, the
//     confirmation), which undoes every step it took when a later one
//     fails, and hands a confirmed booking to its lifecycle;
//   - deposit: the deposit saga, a child of the appointment (a card, or a
//     payment link);
//   - lifecycle: the booking's life after confirmation: cancel, move,
//     reminders, no-show, completion;
//   - reconciler: the scheduled sweep that settles what ended sagas left
//     behind.
//
// The kit is what every workflow shares: booking states and channels
// (types.go), tuning and activity options (tuning.go), the saga helper
// and review cases (saga.go), customer messages (customer_message.go),
// search attributes and phases. The wording of every message is the
// tenant's (tenants.Terms.Render), carried in each workflow's input.
//
// Workflow code is deterministic: no clock but workflow.Now, no
// randomness, no map iteration for decisions, no goroutines; every side
// effect is an activity (package activities) whose idempotency key derives
// from its execution. A change to what a running workflow does is guarded
// by workflow.GetVersion, and the recorded histories in
// testdata/histories replay in make test. Registered workflow names,
// signal, query and update names, workflow ID formats and JSON field
// names never change.
package workflows
