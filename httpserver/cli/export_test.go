package cli

// MainContext is Main under ctx: cancelling ctx stops serve as SIGINT would.
var MainContext = run
