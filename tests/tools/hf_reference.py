#!/usr/bin/env python3
"""Ground truth from Hugging Face transformers for the tokenizer.json and transformers-5 config tests.

Run on a machine with transformers (the GPU machine has it):
    python3 tests/tools/hf_reference.py tests/data/fixtures OUT_DIR
Writes, for the fixtures tiny-gemma3-a and tiny-gemma3-b:
  OUT_DIR/<name>-tokenizer.json   transformers' own conversion of the folder's tokenizer.model
  OUT_DIR/<name>-hf-ids.json      {"transformers": version, "texts": [...], "ids": [[...]]}, no BOS
  OUT_DIR/<name>-config-v5.json   the folder's config.json as this transformers writes it
and prints how far the model's logits move when loaded from the rewritten config (must be ~0).
"""
import json, os, shutil, sys, tempfile

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer


def texts_for(corpus_path):
    lines = [l.rstrip("\n") for l in open(corpus_path, encoding="utf-8")]
    texts = [l for l in lines if l]
    # Multi-line texts keep the newlines and indentation of the license files.
    texts += ["\n".join(lines[i:i + 12]) for i in range(0, min(len(lines), 1200), 12)]
    texts += [
        "def f(x):\n    if x:\n        return  x  * 2\n\treturn 0\n",
        "  two leading, two trailing  ", " one", "one ", "a  b   c    d     e      f",
        "\n\n\nthree newlines then text\n", "\t\ttabs\tbetween\t\twords", "x" * 300,
        "12345 67.89 0x1F 1,000,000", "Grüße aus Köln! Straße, Ärger, Öl, Übel.",
        "你好，世界。今日は世界。안녕하세요", "🙂🚀👩‍💻 emoji and ZWJ", "مرحبا بالعالم", "Ελληνικά κείμενα",
        "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n", "<unk> <pad> <s> </s> text",
        "literal <start_of_turn without closing", "mixed\r\nline\rendings", "\u00a0non-breaking\u2009spaces",
        "   ", " ", "\n", "end.",
    ]
    return texts


def main():
    fixtures, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    print("transformers", transformers.__version__)
    texts = texts_for(os.path.join(fixtures, "tokenizer-corpus.txt"))
    for name in ["tiny-gemma3-a", "tiny-gemma3-b"]:
        folder = os.path.join(fixtures, name)
        tok = AutoTokenizer.from_pretrained(folder)
        print(name, type(tok).__name__, "vocab", len(tok))
        with tempfile.TemporaryDirectory() as tmp:
            tok.save_pretrained(tmp)
            shutil.copy(os.path.join(tmp, "tokenizer.json"), os.path.join(out, name + "-tokenizer.json"))
            if os.path.exists(os.path.join(tmp, "tokenizer_config.json")):
                shutil.copy(os.path.join(tmp, "tokenizer_config.json"), os.path.join(out, name + "-tokenizer_config.json"))
        ids = [tok.encode(t, add_special_tokens=False) for t in texts]
        # The same ids must come back from the tokenizer.json alone.
        from tokenizers import Tokenizer as RawTokenizer
        raw = RawTokenizer.from_file(os.path.join(out, name + "-tokenizer.json"))
        raw_ids = [raw.encode(t, add_special_tokens=False).ids for t in texts]
        print(name, "tokenizer.json alone agrees on", sum(a == b for a, b in zip(ids, raw_ids)), "of", len(texts))
        try:
            import sentencepiece as spm
            sp = spm.SentencePieceProcessor(model_file=os.path.join(folder, "tokenizer.model"))
            same = sum(sp.encode(t) == i for t, i in zip(texts, ids))
            print(name, "SentencePiece on tokenizer.model agrees on", same, "of", len(texts))
        except ImportError:
            print("no sentencepiece module")
        json.dump({"transformers": transformers.__version__, "texts": texts, "ids": ids},
                  open(os.path.join(out, name + "-hf-ids.json"), "w"), ensure_ascii=False)

        config = AutoConfig.from_pretrained(folder)
        with tempfile.TemporaryDirectory() as tmp:
            config.save_pretrained(tmp)
            shutil.copy(os.path.join(tmp, "config.json"), os.path.join(out, name + "-config-v5.json"))
            for f in ["model.safetensors", "tokenizer.model"]:
                os.symlink(os.path.abspath(os.path.join(folder, f)), os.path.join(tmp, f))
            ref = json.load(open(os.path.join(folder, "reference.json")))
            case = ref["cases"][0]
            try:
                model = AutoModelForCausalLM.from_pretrained(tmp, dtype=torch.float32, attn_implementation="eager")
            except Exception as error:  # the multimodal layout needs its own class
                print(name, "AutoModelForCausalLM:", error)
                from transformers import Gemma3ForConditionalGeneration
                model = Gemma3ForConditionalGeneration.from_pretrained(tmp, dtype=torch.float32, attn_implementation="eager")
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([case["input_ids"]])).logits[0]
            want = torch.tensor(case["logits"])
            print(name, "v5 config: logits relative error", float((logits - want).norm() / want.norm()))


main()
