<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>Banner</name>
    <message>
        <source>Dismiss</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>CataloguePage</name>
    <message>
        <source>As stored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Catalogue</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The released Gemma 3 models, the memory their weights take, and whether they fit this computer&apos;s %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The released Gemma 3 models and the memory their weights take.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2, fits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2, too big</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download: about %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show files…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChatPage</name>
    <message>
        <source>Delete this conversation?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“%1” will be removed from this computer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChatPane</name>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Some conversations could not be read and were left as they are:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model could not be loaded: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask Gemma anything</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Everything runs on this computer. Ctrl+Enter sends, Esc stops the answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a Gemma 3 model to start chatting.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export the conversation as JSON</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export the conversation as Markdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln conversation (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import a conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export or import</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import a conversation…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Everything runs on this computer. Enter sends, Shift+Enter starts a new line, Esc stops the answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attach images</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attach</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.webp)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load a model that can see images to attach one.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wait for the answer to finish.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This model cannot see images: it has no vision tower (a GGUF model needs its mmproj file beside it).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <source>code</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy code</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Message Gemma… (Ctrl+Enter to send)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load a model to start chatting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send (Ctrl+Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message Gemma… (Enter to send, Shift+Enter for a new line)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attach images (or drop them here)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove this image</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attach images</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ConversationExport</name>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gemma</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The answer failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: cannot be written (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: larger than %2 MiB, not read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: cannot be read (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: not a conversation Kiln exported (not JSON)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[Image: %1]</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ConversationItem</name>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No messages yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>More</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ConversationSidebar</name>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+N</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No conversation matches</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+F</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ConversationStore</name>
    <message>
        <source>not a Kiln conversation (no &quot;format&quot;: &quot;kiln-conversation&quot;)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>written by a newer Kiln (format version %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>has no &quot;messages&quot; list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>message %1 has an unknown role &quot;%2&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>message %1 has no text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 at byte %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not a JSON object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: cannot create the folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: cannot be written (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: cannot be deleted (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>larger than %1 MiB, not read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot be read (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not valid JSON (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2; moved aside to %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (version %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>message %1 has a version %2 that does not start with its role</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>message %1 has an image with a bad file name &quot;%2&quot;</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DownloadsPage</name>
    <message>
        <source>Downloads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Get a Gemma 3 model from Hugging Face — a model folder or a .gguf file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repository</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OWNER/REPO as on huggingface.co, e.g. ggml-org/gemma-3-1b-it-GGUF.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Listing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>List files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gated models (Google&apos;s Gemma among them) need a Hugging Face token: Settings → Downloads.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This build of Kiln has no downloader.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloaded into %1. The model is in the Models page&apos;s library.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n file(s), saved to %1</source>
        <translation>
            <numerusform>%n file, saved to %1</numerusform>
            <numerusform>%n files, saved to %1</numerusform>
        </translation>
    </message>
    <message>
        <source>on disk</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SHA-256 checked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The hub publishes this file&apos;s SHA-256; the download is verified against it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n file(s) chosen, %1</source>
        <translation>
            <numerusform>%n file chosen, %1</numerusform>
            <numerusform>%n files chosen, %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Tick the files to download.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Using the Hugging Face token from %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>attempt %1 of %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save into the Hugging Face cache (shared with Python tools and llama.cpp)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Downloaded into %1; %n file(s) were already in the Hugging Face cache and are used from there. The model is in the Models page&apos;s library.</source>
        <translation>
            <numerusform>Downloaded into %1; %n file was already in the Hugging Face cache and is used from there. The model is in the Models page&apos;s library.</numerusform>
            <numerusform>Downloaded into %1; %n files were already in the Hugging Face cache and are used from there. The model is in the Models page&apos;s library.</numerusform>
        </translation>
    </message>
    <message>
        <source>SHA-1 checked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The hub publishes this file&apos;s git SHA-1; the download is verified against it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checking the copy already on disk: %1 %</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>EngineWording</name>
    <message>
        <source>16-bit storage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>8-bit storage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>integer dot product (hardware)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>integer dot product (emulated)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cooperative matrix</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no %1 device: no NPU driver is loaded (Ryzen AI NPUs need the amdxdna driver, Linux 6.14 or later)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the attention kernel is built for the Phoenix NPU (npu1), not %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot open %1 (add your user to the group that owns it, usually “render”)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln was built without XRT (the NPU needs the XRT built with AMD’s xdna-driver)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln was built with XRT %1, which has no xrt::hw_context (the NPU needs the XRT built with AMD’s xdna-driver)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the NPU kernels are not installed (%1 is missing)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is driven by “%2”, not amdxdna: no Ryzen AI NPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln was built without NPU support</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no NPU was found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NPU attention was asked for, but %1; attention runs on the %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>attention on the GPU needs the Vulkan backend; attention runs on the CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vulkan works but found no device (no GPU driver installed?)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no Vulkan device found (no GPU driver installed?)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the only Vulkan device is software Vulkan, which runs only when Vulkan is chosen in Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no Vulkan device Kiln can use (the Hardware page says why)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vulkan not used: %1; running on the CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the Vulkan backend keeps attention on the GPU; the NPU attention setting applies to the CPU backend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln was built without Vulkan; running on the CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>embedding (also the output projection) held in %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vulkan %1 (Kiln needs 1.1 or newer)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no buffer device addresses (Vulkan 1.2 bufferDeviceAddress)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no compute queue</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no subgroup arithmetic in compute shaders</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>subgroup size %1 (Kiln needs at least 4)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>workgroups of 256 invocations not supported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>only %1 bytes of shared memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>push constants under 128 bytes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fewer than 10 storage buffers a shader</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU, one thread</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU, %1 threads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, attention on the %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>software Vulkan (slow, for testing): %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU (Vulkan): %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>software Vulkan (slow, for testing): Kiln’s own CPU path is faster, so Automatic never uses it; it runs only when Vulkan is chosen in Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>RAM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the memory of %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the context is %1 tokens, not the %2 the model was trained for: that is what fits in %3 beside the weights</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>GpuFacts</name>
    <message>
        <source>usable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Index</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Driver</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vulkan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory heaps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(device-local)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Supports</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Subgroup size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Largest buffer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Why not used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>integrated GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>discrete GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>virtual GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>software Vulkan (slow, for testing)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>other</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>runs the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>only when chosen</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Note</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>HardwarePage</name>
    <message>
        <source>Hardware</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What this computer offers the engine, and what it does while answering.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Probe again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>While generating</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live: the answer being written now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The last answer; the plots move while the next one is written</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens per second</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory in use</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU busy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No data yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This GPU&apos;s driver does not report it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Processor and memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cores</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 logical</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 total, %2 available</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Probing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Present</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Generation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>XRT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Why not</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Graphics (Vulkan)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No Vulkan device: the engine runs on the CPU.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running the model now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 runs on: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A model is being loaded…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This Vulkan device is the CPU pretending to be a GPU: choose Automatic or CPU in Settings for answers many times faster.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ImageAttachments</name>
    <message>
        <source>%1: the file does not exist</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: not a file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: the file cannot be read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: the file is empty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: the image is larger than %2 MiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: not a PNG, JPEG or WebP image</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: the file cannot be read (%2)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>LineChart</name>
    <message>
        <source>No data yet</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>LoadPanel</name>
    <message>
        <source>Full quality, twice the memory of INT8</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close to FP16, half its size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Smallest and fastest; some quality lost</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quantizing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Uploading to the GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ready</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model chosen</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pick one from the library, or open a folder or file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights only; the context cache comes on top. Backend: %1. Change it in Settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>automatic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reload with these settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start chatting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loaded: %1, %2 of weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>As stored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The file&apos;s own quantization: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>INT8: a Hugging Face folder stores no quantization</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The exact reference, twice the memory of FP16</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2 is still loaded and answers as before.)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vulkan</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <source>Chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hardware</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profiler</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Catalogue</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit and send again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1/%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next version</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>The conversation is longer than the model&apos;s context: it no longer saw the first %n message(s).</source>
        <translation>
            <numerusform>The conversation is longer than the model&apos;s context: it no longer saw the first message.</numerusform>
            <numerusform>The conversation is longer than the model&apos;s context: it no longer saw the first %n messages.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ModelBadge</name>
    <message>
        <source>Open the Models page</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading… %1 %</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 · remote · %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelFactsCard</name>
    <message>
        <source>Facts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>As loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Read from the model&apos;s files; weights not loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Format</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2 global, the rest sliding-window)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hidden size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention heads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 query, %2 key/value, %3 wide</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Feed-forward size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vocabulary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sliding window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trained context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context allocated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights in memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stored as</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tensors</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelFolderPicker</name>
    <message>
        <source>%1: no such folder, and not a .gguf file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type or paste a path, or browse. A Hugging Face model is a folder with config.json: open it, then choose “Open this folder”. A .gguf file opens with a click.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Up one folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A folder or .gguf file, e.g. ~/models/gemma-3-1b-it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Go</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No folders or .gguf files here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This folder holds a model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model in this folder (no config.json).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open this folder</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelListItem</name>
    <message>
        <source>Bundled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>missing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove from the list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hugging Face cache</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelsPage</name>
    <message>
        <source>Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a Gemma 3 model — a Hugging Face folder or a .gguf file — and choose how it is held in memory.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Library</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bundled, downloaded on the Downloads page into %1, found in the Hugging Face cache, and recently opened.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No models yet. Open a folder or a file, or download one on the Downloads page.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloads page</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProfilerPage</name>
    <message>
        <source>Export a Chrome trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chrome trace (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved. Open it in ui.perfetto.dev or chrome://tracing.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profiler</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where the time of the last answer went.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export trace…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profiling was off for this answer. Turn on “Profile answers” and ask again to see per-operation times.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing measured yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turn on “Profile answers”, then ask something on the Chat page. The timings of the last answer appear here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n token(s)</source>
        <translation>
            <numerusform>%n token</numerusform>
            <numerusform>%n tokens</numerusform>
        </translation>
    </message>
    <message>
        <source>Answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>First token after</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt reading</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tok/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Total</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens per second along the answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tok/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Too short an answer to plot</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>By operation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share of the measured time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>By layer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each bar is one layer, split by operation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>RemoteEndpointsCard</name>
    <message>
        <source>Remote endpoints</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models served elsewhere through the OpenAI-compatible API: another Kiln, vLLM, SGLang, llama.cpp&apos;s server or Ollama.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This build of Kiln cannot reach remote endpoints.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>with API key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>List its models again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove this endpoint</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asking for its models…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat with this model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remote · in use</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remote</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Address, e.g. http://192.168.1.20:8080/v1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>API key (if it needs one)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SearchField</name>
    <message>
        <source>Clear</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SettingOrigins</name>
    <message>
        <source>Where these settings come from (%1)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SettingsPage</name>
    <message>
        <source>Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved as you change them.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The loaded model still uses the previous loading settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reload now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Backend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where the model runs. Automatic picks the best Vulkan GPU and falls back to the CPU.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>see the Hardware page</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NPU attention</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run attention on the %1 NPU.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not available: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no NPU found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context length</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The most tokens a conversation can hold. Longer takes more memory.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>0 uses every core (%1 here).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>0 always picks the likeliest word; higher is more varied.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sample only from the likeliest words that together hold this probability.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drop words less likely than this fraction of the likeliest one.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sample from at most this many words (0: no limit).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Longest answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Local API server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lets other programs on this computer use the loaded model through an OpenAI-compatible HTTP API.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Serve on localhost</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not part of this build.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Serving at %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starts when a model is loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Off.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This build of Kiln has no API server.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Port</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Theme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Light</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dark</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Changes here take effect the next time a model is loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No Vulkan device: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gated models such as Google&apos;s Gemma need a Hugging Face account that accepted the licence.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hugging Face token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A read token from huggingface.co/settings/tokens. Left empty, the HF_TOKEN environment variable is used.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hf_…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Makes words used in the last 64 tokens less likely, so long answers do not loop (1: off).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>model default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (model default)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sampling for new answers.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model defaults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings you have not changed follow the loaded model&apos;s own recommendation (its generation_config.json).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use the model&apos;s defaults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use the model&apos;s default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>As stored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How the weights are held in memory. As stored keeps a GGUF file&apos;s own quantization (a folder: INT8). FP32 is the exact reference at twice the size of FP16; INT8 is close to FP16 at half the size; INT4 is smaller again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where the model runs. This computer&apos;s only Vulkan device is software Vulkan (slow, for testing): Automatic runs on the CPU.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Software Vulkan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vulkan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>software Vulkan (slow, for testing)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>More than the %1 tokens this model was trained for: it is loaded with %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Until the model ends its turn; the context (%1 tokens) is the cap.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the model&apos;s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens after which an answer stops (0: until the model ends its turn).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>End of turn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send with Ctrl+Enter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter then starts a new line. Off: Enter sends and Shift+Enter starts a new line.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model’s own length as far as memory holds it: %1 tokens here (it was trained for %2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model’s own length as far as memory holds it: all %1 tokens it was trained for.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model’s own</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SliderRow</name>
    <message>
        <source>Back to the default</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>StatsLine</name>
    <message numerus="yes">
        <source>%n token(s)</source>
        <translation>
            <numerusform>%n token</numerusform>
            <numerusform>%n tokens</numerusform>
        </translation>
    </message>
    <message>
        <source>first token %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>length limit reached</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>context full</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped before the answer began</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SystemPromptEditor</name>
    <message>
        <source>System prompt for this conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>For example: You are a concise assistant. Answer in German.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::gui::ChatController</name>
    <message>
        <source>Wait for the answer to finish, or stop it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model is loaded. Open one on the Models page.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model is busy; try again in a moment.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This model cannot see images. Load a model with a vision tower (Gemma 3 4B, 12B or 27B; a GGUF file needs its mmproj file beside it).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::gui::DownloadController</name>
    <message>
        <source>This build has no downloader (libcurl was missing).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the app&apos;s settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 was not found, or it is private or gated for the account of your token (from %2): check the name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 was not found, or it is private or gated: check the name, or sign in with a Hugging Face token in Settings → Downloads.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your token (from %1) is invalid or expired: create a new one at %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is gated: accept the licence at %2 with the account of your token (from %3).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is gated: accept the licence at %2, then enter a token of that account in Settings → Downloads.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your access request for %1 is pending: its authors have not reviewed it yet (%2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This fine-grained token (from %1) lacks access to gated repositories: enable “public gated repositories” in its settings at %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not enough free space in %1: the download needs %2, %3 are free.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connection problem (%1): retrying in %2 s, attempt %3 of %4.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::gui::EngineController</name>
    <message>
        <source>Unknown load setting: %1 / %2 / %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a model folder or file first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading was cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“%1” is not a web address (http:// or https://).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>remote</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (a remote endpoint)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::gui::EngineWorker</name>
    <message>
        <source>Loading was cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::gui::LaunchOptions</name>
    <message>
        <source>Model folder or .gguf file to open.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>path</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send this message once the model is loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save a PNG of the window when done.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>light or dark (this run only).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>theme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>en or de (this run only).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>code</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit after the prompt was answered and the screenshot saved.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Page to show: chat, models, downloads, hardware, profiler, settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hugging Face repository (OWNER/REPO) for the Downloads page to list.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>repo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download what the Downloads page suggests for --repo.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Regenerate the answer to --prompt once, so both versions are kept.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::gui::ModelCatalogue</name>
    <message>
        <source>Quantization-aware trained: INT4 weights close to full quality.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>llama.cpp&apos;s GGUF files; the size shown is the Q8_0 file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Google&apos;s release; loads at any precision. Gated: accept the licence on Hugging Face first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this build has no downloads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The hub cannot be reached (%1). The list shows what Kiln knows; sizes are estimates.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::gui::ProfileReport</name>
    <message>
        <source>other</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing to export yet: generate an answer first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: cannot be written (%2)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::gui::RemoteEndpoints</name>
    <message>
        <source>The endpoint lists no models.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This build of Kiln cannot reach remote endpoints.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“%1” is not a web address (http:// or https://).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::gui::RemoteWorker</name>
    <message>
        <source>“%1” is not a web address (http:// or https://).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot reach %1. Is the server running, and is the address right? (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 refused the API key (HTTP %2). Add the endpoint again with the right key.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 needs an API key (HTTP %2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 has no such model or address (HTTP 404): %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The endpoint answered with an error (HTTP %1): %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The endpoint stopped the answer with an error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The endpoint&apos;s answer is not what an OpenAI-compatible server sends: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The connection ended before the answer did. %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This build of Kiln cannot reach remote endpoints.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
