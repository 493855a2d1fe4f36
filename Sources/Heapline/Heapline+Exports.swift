// What a recording gives back is made of HeaplineAnalysis's types (Statistics, LeakReport,
// Growth, Timeline…), whose fields are HeaplineTrace's (LeakScan, StackID, MemoryWarning…):
// re-exported, so that `import Heapline` alone can name and use all of it.
@_exported import HeaplineAnalysis
@_exported import HeaplineTrace
